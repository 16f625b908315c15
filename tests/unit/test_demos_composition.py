"""The demos of "Measuring composition" and "Formalising composition", against the library.

Each test calls ``REGISTRY[name].run``, exactly what the page and the worker call, and compares
with ``headspace.composition`` and ``headspace.axioms`` called directly: the demos add no maths
of their own.
"""

from __future__ import annotations

import numpy as np
import pytest

from headspace.composition import METRICS, composition_score
from headspace.demos import REGISTRY
from headspace.demos import identity_paradox


def run(name, **params):
    return REGISTRY[name].run(params)["outputs"]


# --- identity paradox --------------------------------------------------------

@pytest.mark.parametrize("d", identity_paradox.DIMS)
def test_identity_values_are_exact(d):
    out = run("identity-paradox", d=d)
    assert abs(out["frobenius"] - d ** -0.5) < 1e-12
    assert out["svd_bound"] == 1.0
    assert out["subspace"] == 1.0
    assert out["rank_one_frobenius"] == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("d", [d for d in identity_paradox.DIMS if d <= 256])
def test_identity_rows_are_the_library(d):
    """Every shown row, live or tabled, is what composition_score gives on I_d and J_d."""
    out = run("identity-paradox", d=d)
    assert out == identity_paradox.identity_scores(d)
    assert tuple(out[k] for k in identity_paradox.KEYS) == pytest.approx(identity_paradox._TABLE[d], abs=1e-12)


@pytest.mark.parametrize("d", [512, 1024])
def test_identity_large_rows_match_the_cheap_library_calls(d):
    """For the big rows, recompute what is cheap (SVDs of 1024 x 1024 would take seconds)."""
    out = run("identity-paradox", d=d)
    eye, ones = np.eye(d), np.ones((d, d))
    assert out["frobenius"] == composition_score(eye, eye)
    assert out["rank_one_frobenius"] == composition_score(ones, ones)


def test_identity_baseline_is_about_zero():
    """Random Gaussian pairs score about d^-1/2 too, so the corrected identity is near 0."""
    for d in identity_paradox.DIMS[3:]:
        out = run("identity-paradox", d=d)
        assert abs(out["frobenius_baseline"]) < 0.01
        assert out["frobenius_baseline"] == pytest.approx(out["frobenius"] - out["random_frobenius"], abs=1e-12)


def test_identity_bad_d():
    with pytest.raises(ValueError, match="parameter 'd'"):
        REGISTRY["identity-paradox"].run({"d": 3})
    with pytest.raises(ValueError, match="d must be one of"):
        identity_paradox.identity_scores(5)
