"""A parameter value's key (``headspace_site.figure.keys``), the one rule of "the same setting".

- ``key`` writes a value as the page's ``JSON.stringify`` does, checked against Node itself on the
  numbers where Python's and JavaScript's printing differ (whole floats, tiny and huge numbers).
- ``same`` is key equality, also inside lists (``[1.0]`` and ``[1]``: the old Python rule compared
  lists by ``json.dumps`` and called them different while the page called them the same).
- ``Param.control`` / ``Demo.controls``: what the build writes into each control (its text, a
  drop-down's option, whether it does anything) is Python's ``key`` and ``Param.active``.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess

import pytest

from headspace_site.demos import REGISTRY
from headspace_site.figure.keys import key, number, same
from support import sample_params

NUMBERS = [0, 1, -1, 30.0, 0.5, -0.0, 0.1 + 0.2, 1 / 3, 1e-6, 1.5e-7, 1e-7, 123456.789, 1e20, 1e21, 2.5e21,
           5e-324, 1.7976931348623157e308, 2 ** 53 + 2, 0.000001234, 100.0, 1e16, 12345678901234567890.0]
VALUES = NUMBERS + [True, False, None, "two", 'a "quoted" é', [1.0, 2, "x"], [[0.5, 1.0], [2.0, -3.0]],
                    {"a": 1.0, "b": [True]}]


def test_keys_are_what_javascript_writes():
    node = shutil.which("node")
    assert node, "node (Node 20, which the build needs) is not on PATH"
    script = "const v = JSON.parse(require('fs').readFileSync(0, 'utf8')); console.log(JSON.stringify(v.map((x) => JSON.stringify(x))));"
    # repr round-trips each float exactly into JavaScript's parser
    text = "[" + ",".join(repr(v) if isinstance(v, float) else json.dumps(v) for v in VALUES) + "]"
    got = json.loads(subprocess.run([node, "-e", script], input=text, capture_output=True, text=True, check=True).stdout)
    assert [key(v) for v in VALUES] == got


def test_same_is_key_equality():
    assert same(0, 0.0) and same(30, 30.0) and same([1.0], [1]) and same([[0.0, 1]], [[0, 1.0]])
    assert not same(True, 1) and not same("1", 1) and not same(None, 0) and not same([1], [1, 1])


def test_a_bad_value_is_named():
    with pytest.raises(ValueError, match=r"number: expected a finite number; got nan"):
        number(float("nan"))
    with pytest.raises(ValueError, match=r"key: a parameter value must be JSON; got object"):
        key(object())


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_controls_are_pythons_decision(name):
    """Each control's text is its value's key (tokens: the ids with spaces), a drop-down's option is
    the first whose key is the value's, and ``active`` is ``Param.active``, at random settings."""
    demo, rng = REGISTRY[name], random.Random(f"controls-{name}")
    for params in [{}] + [sample_params(demo, rng) for _ in range(5)]:
        resolved = demo.resolve(params)
        controls = demo.controls(params)
        for p in demo.params:
            c, v = controls[p.name], resolved[p.name]
            assert c["active"] == p.active(resolved)
            if p.kind == "tokens":
                assert c["text"] == " ".join(map(str, v))
            elif p.kind == "matrix":
                assert c["text"] == [[key(x) for x in row] for row in v]
            else:
                assert json.loads(c["text"]) == v and c["text"] == key(v)
            if p.kind == "select":
                assert p.to_json()["option_keys"][c["option"]] == key(v)
