"""The reader-swap demo (Formalising Composition, "Axiom 3 against Axiom 4"), against closed forms:
the change of basis keeps the writer, swaps the two readers, and so swaps every two-head score."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from headspace.composition import composition_score
from headspace_site.demos import REGISTRY
from headspace_site.demos.reader_swap import METRICS, construction

angles = st.integers(5, 85)


@given(a=angles, b=angles)
@settings(max_examples=40, deadline=None)
def test_the_swap_keeps_the_writer_and_trades_the_readers(a, b):
    c = construction(a, b)
    S = c["S"]
    assert np.allclose(S @ S, np.eye(4), atol=1e-12)                       # its own inverse
    assert np.allclose(S @ c["A"] @ S, c["A"], atol=1e-12)                  # the writer, unchanged
    assert np.allclose(S @ c["B"] @ S.T, c["D"], atol=1e-12)                # QK rule: B becomes D
    assert np.allclose(S @ c["D"] @ S.T, c["B"], atol=1e-12)


@given(a=angles, b=angles)
@settings(max_examples=40, deadline=None)
def test_frobenius_is_the_cosine_and_swaps(a, b):
    """A rank-1 writer and reader: the Frobenius score is |cos| of the angle between w and r."""
    out = REGISTRY["reader-swap"].run({"angle_b": a, "angle_d": b})["outputs"]
    want = [abs(np.cos(np.deg2rad(a))), abs(np.cos(np.deg2rad(b)))]
    assert out["before"] == pytest.approx(want, abs=1e-9)
    assert out["after"] == pytest.approx(want[::-1], abs=1e-9)
    assert out["order_kept"] == (a == b)


def test_every_score_drawn_swaps():
    c = construction(25, 55)
    S = c["S"]
    for m in METRICS:
        before = [composition_score(c["A"], c[r], m) for r in "BD"]
        after = [composition_score(S @ c["A"] @ S, S @ c[r] @ S.T, m) for r in "BD"]
        assert after == pytest.approx(before[::-1], abs=1e-9), m
        assert before[0] != pytest.approx(before[1]), m


@pytest.mark.parametrize("bad", [0, 90, -5, 120])
def test_angles_outside_the_open_quarter_are_refused(bad):
    with pytest.raises(ValueError, match="angle_b"):
        construction(bad, 30)
