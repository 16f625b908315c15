"""The Jones matrix of a polariser against its closed form and its invariants."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from headspace_site import optics

angles = st.floats(-720, 720, allow_nan=False, allow_infinity=False)


@given(angles)
@settings(derandomize=True)
def test_jones_matches_closed_form(theta):
    t = np.deg2rad(theta)
    c, s = np.cos(t), np.sin(t)
    np.testing.assert_allclose(optics.jones_polarizer(theta), [[c * c, c * s], [c * s, s * s]], atol=1e-15)


@given(angles)
@settings(derandomize=True)
def test_jones_is_symmetric_idempotent_rank_one(theta):
    p = optics.jones_polarizer(theta)
    np.testing.assert_allclose(p, p.T, atol=1e-15)
    np.testing.assert_allclose(p @ p, p, atol=1e-14)
    assert np.linalg.matrix_rank(p) == 1
    assert optics.transmission([p]) == pytest.approx(0.5)


@pytest.mark.parametrize("bad, message", [
    (float("nan"), "theta must be finite"),
    (float("inf"), "theta must be finite"),
    ("45", "theta must be a number; got str '45'"),
    (None, "theta must be a number; got NoneType"),
    (True, "theta must be a number; got bool"),
])
def test_bad_angle_is_a_clear_value_error(bad, message):
    with pytest.raises(ValueError, match=message):
        optics.jones_polarizer(bad)


def test_three_polariser_paradox():
    crossed = [optics.jones_polarizer(0), optics.jones_polarizer(90)]
    assert optics.transmission(crossed) == pytest.approx(0, abs=1e-15)
    middle = [optics.jones_polarizer(0), optics.jones_polarizer(45), optics.jones_polarizer(90)]
    # half survives the first, then cos^2(45) * cos^2(45) = 1/4 of that
    assert optics.transmission(middle) == pytest.approx(0.5 * 0.25)


def test_transmission_rejects_wrong_shape():
    with pytest.raises(ValueError, match=r"matrices\[0\] must have shape \[2, 2\]; got \[3, 3\]"):
        optics.transmission([np.eye(3)])


def test_the_polarisers_shipped_cloud_is_the_one_its_seed_draws():
    """polarizer_light.json holds the cloud point_cloud(200, seed=4) draws, to the bit."""
    from headspace_site.demos import polarizer
    assert np.array_equal(polarizer._LIGHT, polarizer.draw_light())


def test_the_first_articles_figure_answers_without_numpy_random():
    """The polariser's boot imports its demo and draws it without numpy.random (a fresh process:
    importing it took about a tenth of that page's imports in Pyodide, docs/decisions/0011)."""
    import subprocess
    import sys
    code = ("import sys, headspace_site.runtime as r; r.import_demos(['headspace_site.demos.polarizer']); "
            "r.answer('polarizer', '{\"theta\": 31}', 600); print('numpy.random' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
