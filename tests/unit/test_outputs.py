"""What a figure prints under it, and which of its controls do anything.

- Every output of every demo is declared (a label in words, one sentence on what it is, a kind)
  and prints readably at its defaults and at random valid parameters: no Python list brackets,
  no underscores in a label, no ``1e-05``, at most a few significant digits.
- The printing itself (``headspace_site.figure.outputs``) against hand-written expectations: a matrix
  as aligned rows, a head pair as ``L0H1 → L1H2``, units, a true minus sign, escaped text.
- A control the registry declares inactive in a state (``Param.active_when``) really does nothing
  there: moving it leaves the figure and the outputs exactly as they were; declarations name
  real parameters and values, and a bad one is a ValueError naming it.
"""

from __future__ import annotations

import itertools
import random
import re
from html.parser import HTMLParser

import pytest
from hypothesis import given, strategies as st

from headspace_site.demos import REGISTRY, Output, Param, format_outputs
from headspace_site.figure.outputs import column, escape, number, path_label
from headspace_site.figure.registry import Demo
from support import sample_params


# ---------- the formatter ----------

def test_numbers_read_as_written():
    assert number(0.43301) == "0.433"
    assert number(-1.5) == "−1.5"                       # a true minus sign
    assert number(3.885780586188048e-16, floor=0) == "3.9 × 10⁻¹⁶"
    assert number(3.885780586188048e-16) == "0"          # below the default floor
    assert number(7.832e-05) == "7.8 × 10⁻⁵"
    assert number(2861.4) == "2,861"
    assert number(0.9997) == "1.00"                     # not "1": it is not exactly one
    assert number(50.0, unit="°") == "50°"
    assert number(-1e-11) == "0" and column([-0.0004, 0.5]) == ["0.000", "0.500"]  # no "−0.000"


def test_columns_line_up():
    assert column([0.75, 0.433, 0.433, 0.25]) == ["0.750", "0.433", "0.433", "0.250"]
    assert column([2.0, 0.0, 0.0, 1.0]) == ["2", "0", "0", "1"]
    assert column([-0.0375, 0.315, 0.375, 0.08]) == ["−0.037", "0.315", "0.375", "0.080"] or \
        column([-0.0375, 0.315, 0.375, 0.08]) == ["−0.038", "0.315", "0.375", "0.080"]
    with pytest.raises(ValueError, match="finite"):
        column([float("nan")])


@pytest.mark.parametrize("kind, value, text", [
    ("matrix", [[0.75, 0.433], [0.433, 0.25]], "[0.750 0.433; 0.433 0.250]"),
    ("head-pair", [0, 1, 1, 2], "L0H1 → L1H2"),
    ("boolean", False, "no"),
    ("integer", 3000, "3,000"),
    ("vector", [50.0], "50"),
    ("mapping", {"frobenius": 0.6746, "svd_bound": 0.866}, "Frobenius 0.675 · SVD bound 0.866"),   # the articles' words
    ("statements", {"1": "C = 1 when", "4": "order kept"}, "[p; A1 C = 1 when; A4 order kept]"),
    ("layer-head", [[0.1, 0.9], [0.2, 0.3]], "[head 0 head 1; layer 0 0.1 0.9; layer 1 0.2 0.3]"),
    ("head-pairs", [[[[0, 0], [0.5, 0.25]], [[0, 0], [0.1, 0.2]]], [[[0, 0], [0, 0]], [[0, 0], [0, 0]]]],
     "[writer → reader L1H0 L1H1; L0H0 0.50 0.25; L0H1 0.10 0.20]"),
    ("steps", [0, 600, 3000], "3 checkpoints, step 0 to 3,000"),
    ("paths", {"direct": 0.5, "0.1>1.2": -0.25}, "[path p; direct 0.50; L0H1 → L1H2 −0.25]"),
    ("tensor", [[[1, 2, 3]], [[4, 5, 6]]], "2 × 1 × 3; every value is in the menu's data"),
])
def test_kinds_print_as_a_reader_writes(kind, value, text):
    assert Output("k", "p", kind, "h").text(value) == text


def test_a_series_is_labelled_by_its_index_output():
    out = Output("s", "scores", "series", "h", index="steps")
    assert out.text({"a": [0.5, 0.25]}, {"steps": [0, 600]}) == "[step a; 0 0.50; 600 0.25]"


def test_units_none_and_labels():
    assert Output("p", "patterns", "tensor", "h", labels=("layers", "heads")).text([[[0.5]], [[0.5]]]) == \
        "2 layers × 1 heads × 1; every value is in the menu's data"
    assert Output("a", "angles", "vector", "h", unit="°").text([30.0, 60.0]) == "30°, 60°"
    assert Output("c", "first", "number", "h", none="not up to 100").text(None) == "not up to 100"
    # labelled values are read side by side, so they print to shared decimals
    assert Output("x", "crosstalk", "vector", "h", labels=("reader 1", "reader 2")).text([0.0, 0.5]) == \
        "reader 1 0.0 · reader 2 0.5"
    assert Output("b", "before", "vector", "h", labels=("with B", "with D")).text([0.93969, 0.5]) == \
        "with B 0.940 · with D 0.500"
    assert Output("t", "tiny", "vector", "h", labels=("a", "b")).text([0.5, 2e-5]) == "a 0.5 · b 2 × 10⁻⁵"
    assert Output("l", "loss", "number", "h", unit=" nats").text(2.861) == "2.86 nats"


def test_text_is_escaped():
    html = Output("m", "m", "mapping", "h").html({"<b>&": 1.0})
    assert "<b>" not in html and "&lt;b&gt;&amp;" in html


def test_bad_declarations_and_values_are_named():
    with pytest.raises(ValueError, match=r"Output 'k': kind must be one of .*; got 'grid'"):
        Output("k", "label", "grid", "h")
    with pytest.raises(ValueError, match=r"output 'k' of kind 'matrix' cannot print \"oops\""):
        Output("k", "label", "matrix", "h").html("oops")


def test_path_labels():
    assert [path_label(k) for k in ("direct", "bias", "none", "0.3", "1.0>2.1")] == \
        ["direct", "biases", "no term removed", "L0H3", "L1H0 → L2H1"]


# ---------- every demo's outputs ----------

class _Text(HTMLParser):
    """The text of printed HTML, and whether its markup is phrasing content (spans only)."""

    def __init__(self):
        super().__init__()
        self.text, self.tags = [], set()

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)

    def handle_data(self, data):
        self.text.append(data)


def check_readable(name, result):
    demo = REGISTRY[name]
    html = format_outputs(result["outputs"])
    assert list(html) == list(demo.outputs)
    for key, printed in html.items():
        parser = _Text()
        parser.feed(printed)
        text = " ".join(parser.text)
        assert parser.tags <= {"span", "wbr"}, f"{name}.{key}: an <output> holds phrasing content only: {parser.tags}"
        assert not re.search(r"\[\[|\]\]|\d[eE][-+]?\d|\bNone\b|\bTrue\b|\bFalse\b|\bnull\b", text), \
            f"{name}.{key} prints raw Python or JSON: {text[:200]}"
        for num in re.findall(r"\d[\d,]*(?:\.\d+)?", text):
            digits = num.replace(",", "").replace(".", "").lstrip("0")
            assert len(digits) <= 4 or "." not in num, f"{name}.{key}: too many digits in {num}: {text[:200]}"
        assert len(printed) < 40_000, f"{name}.{key}: {len(printed)} characters printed on every move"


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_output_is_declared(name):
    demo = REGISTRY[name]
    for out in demo.described:
        assert out.kind != "auto", f"{name}.{out.key}: declare how it prints (an Output with a kind)"
        assert "_" not in out.label, f"{name}.{out.key}: the label {out.label!r} should read as words"
        said = re.sub(r"<[^>]+>", "", out.help)   # as the reader reads it: maths markup set, not counted
        assert len(said) >= 20 and len(said) <= 140, f"{name}.{out.key}: say what it is in one short sentence"
    info = demo.to_json()["output_info"]
    assert list(info) == list(demo.outputs) and all(info[k]["label"] and info[k]["help"] for k in info)



@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_output_prints_readably(name):
    demo = REGISTRY[name]
    check_readable(name, demo.run({}))
    rng = random.Random(f"outputs-{name}")
    for _ in range(3):
        check_readable(name, demo.run(sample_params(demo, rng)))


def test_a_bare_result_still_prints():
    assert format_outputs({"x": [0.5, 1e-12], "y": "a<b"}) == {"x": "[0.5, 0]", "y": "a&lt;b"}


# ---------- controls that do nothing in a state ----------

GATED = [(n, p.name) for n, d in sorted(REGISTRY.items()) for p in d.params if p.active_when]


def test_the_known_cases_are_declared():
    assert {("communication", "write2"), ("communication", "read2"), ("hidden-symmetry", "dual"),
            ("metric-lab", "decay"), ("metric-lab", "order"), ("circuits", "writer"),
            ("circuits", "mode")} <= set(GATED)


def _other(p: Param, value):
    if p.kind == "checkbox":
        return not value
    if p.kind == "select":
        return next(o for o in p.options if o != value)
    return p.max if value != p.max else p.min


@pytest.mark.parametrize("name, param", GATED)
def test_an_inactive_control_does_nothing(name, param):
    """Wherever ``active_when`` says a control does nothing, moving it changes nothing: not the
    figure, not an output (random states of the other controls, seeded)."""
    demo = REGISTRY[name]
    p = next(q for q in demo.params if q.name == param)
    rng = random.Random(f"inactive-{name}-{param}")
    checked = 0
    for _ in range(60):
        params = demo.resolve(sample_params(demo, rng))
        if p.active(params):
            continue
        moved = {**params, param: _other(p, params[param])}
        # a control never switches itself on: the page keeps a disabled control disabled
        assert not p.active(demo.resolve(moved)), f"moving {name}.{param} to {moved[param]!r} made it active"
        assert demo.run(moved) == demo.run(params), f"{name}.{param} changed something in {params}"
        checked += 1
        if checked == 4:
            break
    assert checked, f"no random state of {name} made {param} inactive: check the test's sampler"


@pytest.mark.parametrize("name, param", GATED)
def test_an_active_control_can_do_something(name, param):
    """The converse at the defaults made active: the declaration does not switch off a live control."""
    demo = REGISTRY[name]
    p = next(q for q in demo.params if q.name == param)
    params = demo.resolve({})
    for other, (how, values) in p.active_when:
        if not p.active(params) and how == "in":
            params[other] = values[-1]
        elif not p.active(params):
            params[other] = next(o for o in _choices(demo, other) if o not in values)
    assert p.active(params)
    assert demo.run({**params, param: _other(p, params[param])}) != demo.run(params)


def _choices(demo, name):
    q = next(x for x in demo.params if x.name == name)
    return list(q.options) if q.kind == "select" else [q.min, q.max, q.default]


def test_off_when_in_json():
    """The page gets Python's table of what switches a control off (keys: the page's JSON), never
    the declaration it was made from, which the page would have to interpret."""
    write2 = next(p for p in REGISTRY["communication"].params if p.name == "write2").to_json()
    assert write2["off_when"] == {"pairs": ['"one"']} and write2["inactive"]
    order = next(p for p in REGISTRY["metric-lab"].params if p.name == "order").to_json()
    assert order["off_when"] == {"rank": ["1"], "decay": ["0"]}
    assert "active_when" not in order


def _declared(p: Param, params: dict) -> bool:
    """``active_when`` read as its docstring says, the slow obvious way: every entry holds."""
    return all((params[other] in values) == (how == "in") for other, (how, values) in p.active_when)


@pytest.mark.parametrize("name, param", GATED)
def test_the_table_is_the_declaration(name, param):
    """``Param.active`` (the table the page also reads) agrees with the declaration at every value
    of the controls that switch it: the table lost nothing in the making."""
    demo = REGISTRY[name]
    p = next(q for q in demo.params if q.name == param)
    gates = [next(q for q in demo.params if q.name == other) for other, _ in p.active_when]
    start = demo.resolve({})
    for combo in itertools.product(*(g.values() or (g.default, 0) for g in gates)):
        params = {**start, **{g.name: g.validate(v) for g, v in zip(gates, combo)}}
        assert p.active(params) == _declared(p, params), f"{name}.{param} at {params}"


def test_an_unlistable_gate_needs_not():
    fn = lambda a, b: {"figure": {}, "outputs": {}}  # noqa: E731
    with pytest.raises(ValueError, match=r"parameter 'b': active_when 'a' lists the values it is active at, but A "
                                         r"can hold values that cannot be listed .*say \{'not': \[values\]\}"):
        Demo("d", "t", (Param("a", "A", "range", 0.5, min=0, max=1, step=0.1),
                        Param("b", "B", "checkbox", False, active_when={"a": [0.5]})), (), fn)
    ok = Demo("d", "t", (Param("a", "A", "range", 0.5, min=0, max=1, step=0.1),
                         Param("b", "B", "checkbox", False, active_when={"a": {"not": [0]}})), (), fn)
    assert ok.params[1].off_when == (("a", ("0",)),) and not ok.params[1].active({"a": 0.0, "b": True})


def test_bad_active_when_is_named():
    fn = lambda a, b: {"figure": {}, "outputs": {}}  # noqa: E731
    with pytest.raises(ValueError, match=r"Param 'b': active_when\['a'\] must be a list of values"):
        Param("b", "B", "checkbox", False, active_when={"a": "x"})
    with pytest.raises(ValueError, match=r"demo 'd': parameter 'b' is active_when 'c', which is not another"):
        Demo("d", "t", (Param("a", "A", "checkbox", False), Param("b", "B", "checkbox", False,
                                                                  active_when={"c": [True]})), (), fn)
    with pytest.raises(ValueError, match=r"demo 'd': parameter 'b': active_when 'a': A must be one of x or y; got 'z'"):
        Demo("d", "t", (Param("a", "A", "select", "x", options=("x", "y")),
                        Param("b", "B", "checkbox", False, active_when={"a": ["z"]})), (), fn)
    default = Demo("d", "t", (Param("a", "A", "select", "x", options=("x", "y")),
                              Param("b", "B", "checkbox", False, active_when={"a": ["y"]})), (), fn)
    assert default.params[1].inactive == "Only when A is y"


@given(st.text())
def test_escape_is_the_standard_librarys_without_quotes(text):
    import html  # the reference; the package avoids importing it (see escape's docstring)
    assert escape(text) == html.escape(text, quote=False)
