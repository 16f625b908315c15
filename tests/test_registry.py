"""Every registry demo, exactly as the browser calls it: defaults and random
valid parameters give JSON outputs with the declared keys and a figure that
plotly's own schema accepts; bad parameters give a clear ValueError."""

from __future__ import annotations

import copy
import json
import os
import re

import plotly.graph_objects as go
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from headspace_site.demos import REGISTRY
from headspace_site.figure.registry import ParameterError
from support import clear_caches, sample_params


def params_strategy(demo):
    """Random valid parameters for ``demo``, drawn by hypothesis (seeded) through the
    sampler the cross-runtime test uses too; some left out, as a shortcode's overrides
    leave them (the rest take their defaults)."""
    def draw(rng):
        params = sample_params(demo, rng)
        return {k: v for k, v in params.items() if rng.random() < 0.75}
    return st.randoms(use_true_random=False).map(draw)


def check_result(demo, result):
    assert set(result) == {"figure", "outputs"}
    assert set(result["outputs"]) == set(demo.outputs)
    json.loads(json.dumps(result, allow_nan=False))  # plain JSON, no NaN
    go.Figure(result["figure"])  # raises on anything plotly's schema rejects


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_defaults(name):
    demo = REGISTRY[name]
    check_result(demo, demo.run({}))


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_random_valid_params(name):
    demo = REGISTRY[name]
    cold = set()  # the first examples drawn (and any replay of them, as hypothesis shrinks)

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow])
    @given(params_strategy(demo))
    def run(params):
        key = json.dumps(params, sort_keys=True)
        if len(cold) < COLD_EXAMPLES:
            cold.add(key)
        check_pure_and_deterministic(demo, params, cold=key in cold)

    run()


#: Random examples per demo: fewer in the fast tier (scripts/test --fast sets HEADSPACE_FAST).
EXAMPLES = 4 if os.environ.get("HEADSPACE_FAST") else 15
#: How many of each demo's examples are also computed again with every cache cleared (a cold
#: model demo costs seconds: composition-over-training scores every checkpoint).
COLD_EXAMPLES = 1 if os.environ.get("HEADSPACE_FAST") else 3


def check_pure_and_deterministic(demo, params, cold=True):
    """``demo.run`` leaves its parameters as they were, gives a valid result, and gives the same
    result again from warm caches (nothing the first call cached was changed) and, if ``cold``,
    with every cache cleared (a cached value is not just repeating a draw that another call
    would not make)."""
    asked = copy.deepcopy(params)
    result = demo.run(params)
    assert params == asked, f"run changed its parameters: {asked} -> {params}"
    check_result(demo, result)
    want = copy.deepcopy(result)
    assert demo.run(copy.deepcopy(asked)) == want, f"{demo.name}{asked}: warm caches give another result"
    if cold:
        assert clear_caches() > 0
        assert demo.run(copy.deepcopy(asked)) == want, f"{demo.name}{asked}: computed afresh, another result"


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_declarations_are_complete(name):
    demo = REGISTRY[name]
    assert demo.title and demo.outputs
    for p in demo.params:
        assert p.label, f"{name}.{p.name} needs a label"
        if p.kind == "range":
            assert p.min is not None and p.max is not None and p.min < p.max
        if p.animate:
            assert p.kind == "range", f"{name}.{p.name}: only sliders animate"
    json.dumps(demo.to_json())


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_bad_params_name_the_parameter(name):
    demo = REGISTRY[name]
    with pytest.raises(ValueError, match=rf"demo '{name}' has no parameter 'nonsense'"):
        demo.run({"nonsense": 1})
    for p in demo.params:   # refused in plain words: the control's label, no code name, no Python list
        bad = "x" if p.kind != "select" else object()
        with pytest.raises(ParameterError) as refusal:
            demo.run({p.name: bad})
        message = str(refusal.value)
        assert refusal.value.param == p.name and message.startswith(p.label), message
        assert f"parameter '{p.name}'" not in message and "[" not in message, message
        if p.kind in ("range", "number") and p.max is not None:
            with pytest.raises(ParameterError, match=rf"^{re.escape(p.label)} must be between"):
                demo.run({p.name: p.max + abs(p.max) + 1})
