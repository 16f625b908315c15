"""The maths behind the demos of "Composition and Subspaces", against closed forms.

Each test calls ``REGISTRY[name].run``, exactly what the page and the worker call.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from headspace_site.demos import REGISTRY
from headspace_site.figure.registry import ParameterError
from headspace_site.demos.communication import principal_angles, unit
from headspace_site.demos.hidden_symmetry import basis_change

angle = st.integers(0, 180)
weight = st.floats(-3, 3, allow_nan=False)


def run(name, **params):
    return REGISTRY[name].run(params)["outputs"]


def cos2(deg):
    return np.cos(np.deg2rad(deg)) ** 2


# --- projections ------------------------------------------------------------

@given(w1=weight, w2=weight, orient=st.booleans(), t=st.integers(0, 239))
@settings(max_examples=40, deadline=None)
def test_projection_down_matrix_is_the_params(w1, w2, orient, t):
    assert run("projection-2d-1d", w1=w1, w2=w2, orient=orient, t=t)["matrix"] == [[w1, w2]]


def test_projection_down_plots_w_times_x():
    """The 1-D panel shows W x for the cloud at frame t, whichever way the 2-D view is turned."""
    from headspace_site.demos.projection import points_at
    for orient in (False, True):
        fig = REGISTRY["projection-2d-1d"].run({"w1": 1.3, "w2": -0.4, "t": 17, "orient": orient})["figure"]
        one_d = next(tr for tr in fig["data"] if tr["name"] == "y = W x")
        np.testing.assert_allclose(one_d["x"], np.array([1.3, -0.4]) @ points_at(17), atol=1e-6)


def test_projection_down_orient_lays_the_line_flat():
    fig = REGISTRY["projection-2d-1d"].run({"w1": 1, "w2": 1, "orient": True})["figure"]
    line = next(tr for tr in fig["data"] if tr["name"].startswith("the line W reads along"))
    np.testing.assert_allclose(line["y"], [0, 0], atol=1e-6)


def test_projection_down_wiggle_loops_and_is_deterministic():
    from headspace_site.demos.projection import STEPS, points_at
    np.testing.assert_array_equal(points_at(0), points_at(STEPS))
    a = REGISTRY["projection-2d-1d"].run({"t": 5})
    assert a == REGISTRY["projection-2d-1d"].run({"t": 5})
    assert a != REGISTRY["projection-2d-1d"].run({"t": 6})
    step = np.abs(points_at(1) - points_at(0)).max()
    assert 0 < step < 0.2          # gentle: no point jumps between frames


@given(u1=st.floats(-4, 4), u2=st.floats(-4, 4))
@settings(max_examples=40, deadline=None)
def test_projection_up_matrix_is_the_params_and_output_is_a_line(u1, u2):
    out = REGISTRY["projection-1d-2d"].run({"u1": u1, "u2": u2})
    assert out["outputs"]["matrix"] == [[u1], [u2]]
    z = np.array([out["figure"]["data"][-1]["x"], out["figure"]["data"][-1]["y"]])
    assert np.linalg.matrix_rank(z, tol=1e-4) <= 1     # every written point lies on one line



@given(u1=st.floats(-4, 4), u2=st.floats(-4, 4))
@settings(max_examples=40, deadline=None)
def test_projection_up_range_is_fixed_and_holds_every_point(u1, u2):
    """One 2-D range for every (u1, u2) the sliders reach, so a drag never changes the axes."""
    fig = REGISTRY["projection-1d-2d"].run({"u1": u1, "u2": u2})["figure"]
    lay = fig["layout"]
    assert lay["xaxis2"]["range"] == lay["yaxis2"]["range"] == list(
        REGISTRY["projection-1d-2d"].run({})["figure"]["layout"]["xaxis2"]["range"])
    reach = lay["xaxis2"]["range"][1]
    z = np.array([fig["data"][-1]["x"], fig["data"][-1]["y"]])
    assert np.abs(z).max() <= reach
    # the farthest point the sliders reach (u = (4, 4), y = 2) fits with under a quarter to spare
    assert 2 * 4 * np.sqrt(2) <= reach < 1.25 * 2 * 4 * np.sqrt(2)

# --- bottleneck ---------------------------------------------------------------

@given(d1=weight, d2=weight, u1=weight, u2=weight)
@settings(max_examples=60, deadline=None)
def test_bottleneck_is_outer_product_of_rank_at_most_one(d1, d2, u1, u2):
    out = run("bottleneck", d1=d1, d2=d2, u1=u1, u2=u2)
    m = np.array(out["matrix"])
    np.testing.assert_allclose(m, np.outer([u1, u2], [d1, d2]), atol=1e-12)
    assert out["rank"] <= 1
    assert out["rank"] == np.linalg.matrix_rank(m)
    assert abs(m[0, 0] * m[1, 1] - m[0, 1] * m[1, 0]) < 1e-9  # 2x2 determinant, no LU


def test_bottleneck_rank_zero_when_a_side_is_zero():
    assert run("bottleneck", d1=0, d2=0)["rank"] == 0
    assert run("bottleneck", u1=0, u2=0)["rank"] == 0
    assert run("bottleneck", d1=1, d2=0, u1=0, u2=1)["rank"] == 1


# --- three polarisers -----------------------------------------------------------

@given(t1=angle, t2=angle, t3=angle)
@settings(max_examples=60, deadline=None)
def test_three_polarizers_transmission_is_malus_twice(t1, t2, t3):
    with_middle = run("three-polarizers", theta1=t1, theta2=t2, theta3=t3, middle=True)
    without = run("three-polarizers", theta1=t1, theta2=t2, theta3=t3, middle=False)
    assert with_middle["transmission"] == pytest.approx(cos2(t2 - t1) * cos2(t3 - t2), abs=1e-12)
    assert without["transmission"] == pytest.approx(cos2(t3 - t1), abs=1e-12)


@given(t1=angle, t2=angle, t3=angle, middle=st.booleans())
@settings(max_examples=40, deadline=None)
def test_three_polarizers_matrix_is_the_product_in_light_order(t1, t2, t3, middle):
    def p(deg):
        u = unit(deg)[:, 0]
        return np.outer(u, u)
    want = p(t3) @ p(t2) @ p(t1) if middle else p(t3) @ p(t1)
    out = run("three-polarizers", theta1=t1, theta2=t2, theta3=t3, middle=middle)
    np.testing.assert_allclose(out["matrix"], want, atol=1e-12)
    e1 = unit(t1)[:, 0]
    assert out["transmission"] == pytest.approx(np.sum((np.array(out["matrix"]) @ e1) ** 2), abs=1e-12)


def test_three_polarizers_paradox_at_the_defaults():
    assert run("three-polarizers", middle=False)["transmission"] == pytest.approx(0, abs=1e-15)
    out = run("three-polarizers")
    assert out["transmission"] == pytest.approx(0.25, abs=1e-15)
    np.testing.assert_allclose(out["matrix"], [[0, 0], [0.5, 0]], atol=1e-15)


# --- hidden symmetry ----------------------------------------------------------------

invertible = dict(rotation=st.integers(-180, 180), scale=st.floats(0.25, 4), shear=st.floats(-2, 2),
                  flip=st.booleans())


@given(**invertible)
@settings(max_examples=80, deadline=None)
def test_hidden_symmetry_output_never_changes(rotation, scale, shear, flip):
    out = run("hidden-symmetry", rotation=rotation, scale=scale, shear=shear, flip=flip)
    assert out["max_output_change"] < 1e-12
    assert out["max_score_change_dual"] < 1e-12      # keys by A^T: any invertible A keeps scores
    np.testing.assert_allclose(out["A"], basis_change(rotation, scale, shear, flip), atol=1e-15)


@given(rotation=st.integers(-180, 180), flip=st.booleans())
@settings(max_examples=40, deadline=None)
def test_hidden_symmetry_orthogonal_a_keeps_scores(rotation, flip):
    out = run("hidden-symmetry", rotation=rotation, scale=1, shear=0, flip=flip)
    assert out["orthogonal"]
    assert out["max_score_change"] < 1e-12


@given(rotation=st.integers(-180, 180), scale=st.floats(0.25, 4), shear=st.floats(-2, 2))
@settings(max_examples=40, deadline=None)
def test_hidden_symmetry_non_orthogonal_a_changes_scores(rotation, scale, shear):
    a = basis_change(rotation, scale, shear, False)
    if np.abs(a.T @ a - np.eye(2)).max() < 0.05:
        return                                       # too close to orthogonal to expect a visible change
    out = run("hidden-symmetry", rotation=rotation, scale=scale, shear=shear)
    assert not out["orthogonal"]
    assert out["max_score_change"] > 1e-3
    assert out["max_output_change"] < 1e-12
    assert out["max_hidden_change"] > 1e-3           # the hidden values did move


def test_hidden_symmetry_identity_changes_nothing():
    out = run("hidden-symmetry", rotation=0, scale=1, shear=0)
    assert out["orthogonal"] and out["max_hidden_change"] < 1e-15 and out["max_score_change"] < 1e-15


def test_hidden_symmetry_rejects_singular_a():
    with pytest.raises(ValueError, match="scale"):
        basis_change(0, 0, 0, False)


# --- communication ----------------------------------------------------------------

def gain(read, write):
    return np.cos(np.deg2rad(read - write))


@given(w=angle, r=angle)
@settings(max_examples=60, deadline=None)
def test_communication_one_pair_gain_is_cos(w, r):
    out = run("communication", pairs="one", write1=w, read1=r)
    g = gain(r, w)
    np.testing.assert_allclose(out["transfer"], [[g]], atol=1e-12)
    np.testing.assert_allclose(out["singular_values"], [abs(g)], atol=1e-12)
    # bandwidth = cos of the principal angle between the two lines
    np.testing.assert_allclose(np.cos(np.deg2rad(out["principal_angles"])), [abs(g)], atol=1e-9)
    assert out["crosstalk"] == [0.0]


@given(w1=angle, w2=angle, r1=angle, r2=angle)
@settings(max_examples=80, deadline=None)
def test_communication_two_pairs_transfer_closed_form(w1, w2, r1, r2):
    out = run("communication", pairs="two", write1=w1, write2=w2, read1=r1, read2=r2)
    t = np.array([[gain(r1, w1), gain(r1, w2)], [gain(r2, w1), gain(r2, w2)]])
    np.testing.assert_allclose(out["transfer"], t, atol=1e-12)
    np.testing.assert_allclose(out["singular_values"], np.linalg.svd(t, compute_uv=False), atol=1e-12)
    # closed form for 2x2: s1^2 + s2^2 = ||T||_F^2 and s1 s2 = |det T|
    s = np.array(out["singular_values"])
    assert s[0] >= s[1] >= 0
    assert s @ s == pytest.approx(np.sum(t * t), abs=1e-12)
    assert s[0] * s[1] == pytest.approx(abs(np.linalg.det(t)), abs=1e-12)
    # det T = sin(r2 - r1) sin(w2 - w1): both messages survive unless a side is parallel
    sin = lambda d: np.sin(np.deg2rad(d))
    assert s[0] * s[1] == pytest.approx(abs(sin(r2 - r1) * sin(w2 - w1)), abs=1e-12)
    power = t * t
    np.testing.assert_allclose(out["crosstalk"],
                               [power[0, 1] / power[0].sum() if power[0].sum() > 1e-15 else 0,
                                power[1, 0] / power[1].sum() if power[1].sum() > 1e-15 else 0], atol=1e-12)


def test_communication_orthonormal_sides_singular_values_are_principal_cosines():
    # writers at 10 and 100, readers at 40 and 130: both spans are the plane, T is a rotation
    out = run("communication", pairs="two", write1=10, write2=100, read1=40, read2=130)
    np.testing.assert_allclose(out["singular_values"], [1, 1], atol=1e-12)
    np.testing.assert_allclose(out["principal_angles"], [0, 0], atol=1e-6)
    np.testing.assert_allclose(out["crosstalk"], [0.25, 0.25], atol=1e-12)   # sin^2 30


def test_communication_parallel_writers_lose_a_message():
    out = run("communication", pairs="two", write1=30, write2=30, read1=0, read2=90)
    assert out["singular_values"][1] == pytest.approx(0, abs=1e-12)
    assert len(out["principal_angles"]) == 1 and out["principal_angles"][0] == pytest.approx(0, abs=1e-6)


def test_principal_angles_reference():
    # a plane in 3-D against a line 30 degrees out of it
    plane = np.array([[1.0, 0], [0, 1], [0, 0]])
    line = np.array([[np.cos(np.pi / 6)], [0], [np.sin(np.pi / 6)]])
    np.testing.assert_allclose(principal_angles(plane, line), [30], atol=1e-9)
    np.testing.assert_allclose(principal_angles(plane, 5 * plane @ [[1, 2], [0, 1]]), [0, 0], atol=1e-6)


# --- bad params ---------------------------------------------------------------------

@pytest.mark.parametrize("name, params", [
    ("projection-2d-1d", {"w1": 9}),
    ("projection-2d-1d", {"w1": float("nan")}),
    ("projection-2d-1d", {"orient": "yes"}),
    ("projection-2d-1d", {"t": -1}),
    ("projection-1d-2d", {"u2": "1"}),
    ("bottleneck", {"d1": float("inf")}),
    ("bottleneck", {"rank": 2}),
    ("three-polarizers", {"theta2": 181}),
    ("three-polarizers", {"middle": 1}),
    ("hidden-symmetry", {"scale": 0}),
    ("hidden-symmetry", {"view": "VO"}),
    ("communication", {"pairs": "three"}),
    ("communication", {"read1": -5}),
    ("communication", {"message": True}),
])
def test_bad_params_raise_value_error(name, params):
    """Refused naming the control as the page labels it (not the parameter's code name)."""
    key = next(iter(params))
    label = next((p.label for p in REGISTRY[name].params if p.name == key), None)
    said = "^" + re.escape(label) if label else f"has no parameter '{key}'; its parameters are"
    with pytest.raises(ParameterError, match=said) as refusal:
        REGISTRY[name].run(params)
    assert refusal.value.param == key
