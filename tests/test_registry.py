"""Every registry demo, exactly as the browser calls it: defaults and random
valid parameters give JSON outputs with the declared keys and a figure that
plotly's own schema accepts; bad parameters give a clear ValueError."""

from __future__ import annotations

import json

import plotly.graph_objects as go
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from headspace.demos import REGISTRY
from support import sample_params


def params_strategy(demo):
    """Random valid parameters for ``demo``, drawn by hypothesis (seeded) through the
    sampler the cross-runtime test uses too."""
    return st.randoms(use_true_random=False).map(lambda rng: sample_params(demo, rng))


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

    @settings(max_examples=15, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow])
    @given(params_strategy(demo))
    def run(params):
        result = demo.run(params)
        check_result(demo, result)
        assert demo.run(params) == result  # pure and deterministic

    run()


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
    for p in demo.params:
        bad = "x" if p.kind != "select" else object()
        with pytest.raises(ValueError, match=rf"parameter '{p.name}'"):
            demo.run({p.name: bad})
        if p.kind in ("range", "number") and p.max is not None:
            with pytest.raises(ValueError, match=rf"parameter '{p.name}' must be between"):
                demo.run({p.name: p.max + abs(p.max) + 1})
