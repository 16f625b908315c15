"""The demos that give "Formalising Composition" and "Composition and Subspaces" their pictures
between the longer stretches of prose: inclusion-swap, rank-drop, singular-routes, random-subspaces.

Each test calls ``REGISTRY[name].run``, exactly what the page and the worker call, and checks it
against a slow, obvious reference or a closed form.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from headspace.axioms import axiom_3_as_posed_counterexample, inclusion_swap
from headspace.composition import composition_score
from headspace_site.demos import REGISTRY
from headspace_site.demos.inclusion_swap import power


def run(name, **params):
    return REGISTRY[name].run(params)


def cos2(deg):
    return np.cos(np.deg2rad(deg)) ** 2


def _angle(u, v):
    """The angle between two lines through the origin, folded into [0, 90] degrees."""
    c = abs(u @ v) / (np.linalg.norm(u) * np.linalg.norm(v))
    return np.degrees(np.arccos(np.clip(c, 0.0, 1.0)))


# --- inclusion-swap -----------------------------------------------------------

@given(phi=st.sampled_from(range(5, 81, 5)), stretch=st.sampled_from(np.round(np.arange(0, 1.01, 0.05), 2).tolist()))
@settings(max_examples=40, deadline=None)
def test_inclusion_swap_against_the_transformed_matrices(phi, stretch):
    """Angles from the row space of T^-s A T^s and the column spaces of T^-s B T^-s (their SVDs)."""
    out = run("inclusion-swap", phi=phi, stretch=stretch)["outputs"]
    ex = inclusion_swap(phi, d_model=2)
    Ts, Tis = power(ex["T"], stretch), power(ex["T"], -stretch)
    A = Tis @ ex["A"] @ Ts
    w = np.linalg.svd(A)[2][0]                                        # the writer's row space
    for got, R in zip(out["angles"], (ex["B"], ex["D"])):
        r = np.linalg.svd(Tis @ R @ Tis)[0][:, 0]                      # the reader's column space
        assert got == pytest.approx(_angle(w, r), abs=1e-6)
    assert out["subspace"] == pytest.approx(cos2(np.array(out["angles"])).tolist(), abs=1e-7)
    assert out["counting"] == [1.0, 1.0]                               # never exactly in a kernel
    lam = np.linalg.eigvalsh(ex["T"])
    assert out["condition"] == pytest.approx(np.linalg.cond(Ts))
    assert out["condition"] == pytest.approx((lam.max() / lam.min()) ** stretch)


@pytest.mark.parametrize("phi", [5, 45, 60, 80])
def test_inclusion_swap_ends_swap_the_angles(phi):
    """No stretch: the writer is inside B's space, phi from D's; all of T: the other way round."""
    before = run("inclusion-swap", phi=phi, stretch=0)["outputs"]
    after = run("inclusion-swap", phi=phi, stretch=1)["outputs"]
    assert before["angles"] == pytest.approx([0, phi], abs=1e-7)
    assert after["angles"] == pytest.approx([phi, 0], abs=1e-7)
    assert before["condition"] == 1.0
    assert after["condition"] == pytest.approx(inclusion_swap(phi)["condition"])


def test_inclusion_swap_counting_is_the_kernel_share():
    from headspace_site.demos.inclusion_swap import counting
    e1, e2 = np.eye(2)
    assert counting(np.outer(e1, e1), np.outer(e2, e2)) == 0.0        # the writer lies in the kernel
    assert counting(np.eye(3), np.diag([1.0, 1.0, 0.0])) == pytest.approx(2 / 3)


def test_inclusion_swap_draws_the_lines_it_reports():
    fig = run("inclusion-swap", phi=60, stretch=0.5)["figure"]
    out = run("inclusion-swap", phi=60, stretch=0.5)["outputs"]
    line = {t["name"]: np.array([t["x"][1], t["y"][1]]) for t in fig["data"]}
    assert _angle(line["writer A"], line["reader B"]) == pytest.approx(out["angles"][0], abs=1e-3)
    assert _angle(line["writer A"], line["reader D"]) == pytest.approx(out["angles"][1], abs=1e-3)
    assert abs(line["B's kernel"] @ line["reader B"]) < 1e-5


# --- rank-drop ------------------------------------------------------------------

@given(eps=st.sampled_from(np.round(np.arange(0, 0.51, 0.01), 2).tolist()), delta=st.integers(2, 40))
@settings(max_examples=40, deadline=None)
def test_rank_drop_scores_the_library_pair(eps, delta):
    """Each output is composition_score of the matrices axiom_3_as_posed_counterexample builds."""
    out = run("rank-drop", eps=eps, delta=delta)["outputs"]
    ex = axiom_3_as_posed_counterexample(eps, delta)
    for metric in ("subspace", "frobenius"):
        want = [composition_score(ex[a], ex["B"], metric) for a in ("A_1", "A_2")]
        assert out[metric] == pytest.approx(want, abs=1e-9)


@pytest.mark.parametrize("delta", [2, 10, 40])
def test_rank_drop_subspace_keeps_the_order_and_jumps(delta):
    """Angles (0, 90) and (0, 90 - delta) give 1/2 and (1 + sin^2 delta)/2 for every eps > 0; the
    rank-1 limits give 1 and sin^2 delta: the order flips at eps = 0."""
    s2 = np.sin(np.deg2rad(delta)) ** 2
    for eps in (0.01, 0.2, 0.5):
        assert run("rank-drop", eps=eps, delta=delta)["outputs"]["subspace"] == pytest.approx([0.5, (1 + s2) / 2])
    assert run("rank-drop", eps=0, delta=delta)["outputs"]["subspace"] == pytest.approx([1.0, s2])


@pytest.mark.parametrize("delta", [2, 10, 40])
def test_rank_drop_frobenius_is_continuous_with_the_wrong_order(delta):
    eps = np.round(np.arange(0, 0.51, 0.01), 2)
    f = np.array([run("rank-drop", eps=float(e), delta=delta)["outputs"]["frobenius"] for e in eps])
    assert np.all(f[:, 0] > f[:, 1])                                   # A_1 above A_2 throughout
    assert np.max(np.abs(np.diff(f, axis=0))) < 0.02                   # no jump anywhere, eps = 0 included


def test_rank_drop_figure_marks_the_limits_and_the_choice():
    fig = run("rank-drop", eps=0.3, delta=10)["figure"]
    limit = run("rank-drop", eps=0, delta=10)["outputs"]
    now = run("rank-drop", eps=0.3, delta=10)["outputs"]
    marks = [t for t in fig["data"] if t["name"].endswith("at ε = 0")]
    assert sorted(t["y"][0] for t in marks) == pytest.approx(sorted(limit["subspace"] + limit["frobenius"]), abs=1e-6)
    chosen = [t for t in fig["data"] if t["name"] == "chosen ε"]
    assert [t["y"] for t in chosen] == [pytest.approx(now["subspace"], abs=1e-6), pytest.approx(now["frobenius"], abs=1e-6)]


# --- singular-routes ---------------------------------------------------------------

@given(turn=st.sampled_from(range(0, 91, 5)), decay=st.sampled_from(np.round(np.arange(0, 2.01, 0.1), 1).tolist()),
       order=st.sampled_from(["same", "reversed"]))
@settings(max_examples=40, deadline=None)
def test_singular_routes_against_the_svds(turn, decay, order):
    """M_ij = sigma_i tau_j cos(v_i, u_j) from each head's own SVD, entry by entry; ||M|| = ||AB||."""
    from headspace_site.demos.singular_routes import heads
    got = run("singular-routes", turn=turn, decay=decay, order=order)
    out = got["outputs"]
    A, B, *_ = heads(turn, decay, order)
    Ua, sa, Vat = np.linalg.svd(A)
    Ub, sb, _ = np.linalg.svd(B)
    # the demo lists directions in its own order (writer by index, reader by index), the SVD by size:
    # compare the route strengths as multisets, and the norms exactly
    slow = np.array([[sa[i] * sb[j] * abs(Vat[i] @ Ub[:, j]) for j in range(4)] for i in range(4)])
    M = np.array(out["routes"])
    assert np.sort(np.abs(M).ravel()) == pytest.approx(np.sort(slow.ravel()), abs=1e-9)
    assert np.linalg.norm(M) == pytest.approx(np.linalg.norm(A @ B))
    norms = next(t for t in got["figure"]["data"] if t["type"] == "bar")["y"]
    assert norms[0] == pytest.approx(np.linalg.norm(A @ B), abs=1e-5)
    assert norms[1] == pytest.approx(np.linalg.norm(sa * sb), abs=1e-5)
    assert norms[2] == pytest.approx(np.linalg.norm(A) * np.linalg.norm(B), abs=1e-5)
    assert norms[0] <= norms[1] + 1e-6 <= norms[2] + 2e-6                # the chain of inequalities
    assert out["frobenius"] == pytest.approx(norms[0] / norms[2], abs=1e-5)
    assert out["svd_bound"] == pytest.approx(norms[0] / norms[1], abs=1e-5)


def test_singular_routes_bound_reached_only_when_matched_and_ordered():
    assert run("singular-routes", turn=0, decay=0.5, order="same")["outputs"]["svd_bound"] == pytest.approx(1.0)
    assert run("singular-routes", turn=0, decay=0.5, order="reversed")["outputs"]["svd_bound"] < 0.99
    assert run("singular-routes", turn=30, decay=0.5, order="same")["outputs"]["svd_bound"] < 0.99
    # equal singular values: the identity, whose Frobenius score is 4^-1/2 at every turn... of the basis
    assert run("singular-routes", turn=0, decay=0, order="same")["outputs"]["frobenius"] == pytest.approx(0.5)


# --- random-subspaces -----------------------------------------------------------------

@pytest.mark.parametrize("shared,n,k,seed", [(0, 128, 4, 0), (2, 128, 16, 3), (4, 256, 4, 9), (1, 128, 64, 5)])
def test_random_subspaces_mean_is_the_subspace_score(shared, n, k, seed):
    """mean cos^2 equals the library's subspace score of a writer writing W and a reader reading R."""
    from headspace_site.demos.random_subspaces import spaces
    out = run("random-subspaces", shared=shared, n=n, k=k, seed=seed)["outputs"]
    W, R = spaces(n, k, shared, seed)
    rng = np.random.default_rng(1)
    A = rng.standard_normal((n, k)) @ W.T                             # row space: span W
    B = R @ rng.standard_normal((k, n))                               # column space: span R
    assert out["mean_cos2"] == pytest.approx(composition_score(A, B, "subspace"), abs=1e-9)
    angles = np.array(out["principal_angles"])
    assert np.all(np.diff(angles) >= -1e-9) and angles.min() >= 0 and angles.max() <= 90
    assert angles[:shared] == pytest.approx(0.0, abs=1e-6)
    assert out["chance"] == k / n


def test_random_subspaces_sit_near_chance():
    """Averaged over seeds, the mean cos^2 of random pairs is k / n."""
    means = [run("random-subspaces", shared=0, n=256, k=16, seed=s)["outputs"]["mean_cos2"] for s in range(10)]
    assert np.mean(means) == pytest.approx(16 / 256, rel=0.1)


# --- every new figure can be redrawn in place -----------------------------------------

def _ranges(fig):
    lay = fig["layout"]
    return {k: v.get("range") for k, v in lay.items() if k.startswith(("xaxis", "yaxis"))}


@pytest.mark.parametrize("name", ["inclusion-swap", "rank-drop", "singular-routes", "random-subspaces"])
def test_axis_ranges_stay_fixed(name):
    """Every range is fixed: a move shifts the data, not the axes the reader reads them against."""
    demo = REGISTRY[name]
    base = _ranges(demo.run({})["figure"])
    rng = np.random.default_rng(0)
    for _ in range(12):
        params = {}
        for p in demo.params:
            if p.kind == "range":
                params[p.name] = p.default if p.step is None else type(p.default)(
                    p.min + p.step * rng.integers(0, round((p.max - p.min) / p.step) + 1))
            elif p.kind == "select":
                params[p.name] = p.options[rng.integers(len(p.options))]
        assert _ranges(demo.run(params)["figure"]) == base


# --- what the captions claim ------------------------------------------------------------

@pytest.mark.parametrize("phi", [5, 30, 45, 60, 80])
def test_inclusion_swap_readers_tie_halfway(phi):
    """Halfway through the stretch the writer makes the same angle with both readers."""
    a = run("inclusion-swap", phi=phi, stretch=0.5)["outputs"]["angles"]
    assert a[0] == pytest.approx(a[1], abs=1e-7)


@pytest.mark.slow  # the full run only (scripts/test --fast leaves it out)
def test_random_subspaces_at_gpt2_sizes_every_seed_sits_near_chance():
    """Formalising Composition: 'at these sizes the mean stays close to chance', whatever the seed;
    Composition and Subspaces: 'the dots gather far from 0°'."""
    for seed in range(10):
        out = run("random-subspaces", shared=0, n=768, k=64, seed=seed)["outputs"]
        assert out["mean_cos2"] == pytest.approx(out["chance"], rel=0.05)
        assert min(out["principal_angles"]) > 45


def test_random_subspaces_overlap_more_in_a_smaller_stream():
    smallest = {n: np.mean([run("random-subspaces", n=n, k=64, seed=s)["outputs"]["principal_angles"][0]
                            for s in range(5)]) for n in (128, 256, 768)}
    assert smallest[128] < smallest[256] < smallest[768]


def test_random_subspaces_shared_directions_raise_the_mean():
    means = [run("random-subspaces", shared=s)["outputs"]["mean_cos2"] for s in range(5)]
    assert all(b > a for a, b in zip(means, means[1:]))


def test_communication_aligned_pairs_have_zero_angles_but_not_unit_gains():
    """Composition and Subspaces, bandwidth: writers and readers at 0 and 60 degrees; then reader 2
    turned: the singular values move, the principal angles stay [0, 0]; only when the read lines
    meet does the list lose an angle."""
    base = dict(pairs="two", write1=0, read1=0, write2=60, read2=60)
    out = run("communication", **base)["outputs"]
    assert out["principal_angles"] == [0.0, 0.0]
    assert not np.allclose(out["singular_values"], 1.0)
    seen = []
    for read2 in range(0, 181, 10):
        o = run("communication", **{**base, "read2": read2})["outputs"]
        meet = read2 % 180 == 0
        assert o["principal_angles"] == ([0.0] if meet else [0.0, 0.0])    # a read line lost, not an angle opened
        seen.append(tuple(np.round(o["singular_values"], 9)))
    assert len(set(seen)) == len(seen) - 1        # 0 and 180 degrees are the same line
