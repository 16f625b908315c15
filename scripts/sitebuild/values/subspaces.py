"""The numbers site/content/posts/composition-and-subspaces.md states
(``{{< value "subspaces.name" >}}``), and the claims in its prose this checks."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from headspace import axioms
from headspace_site import optics
from headspace_site.demos import REGISTRY

from ._shared import GPT2_SMALL, _holds, _outputs, _power_of_ten, _the_same


def _chain(steps: int) -> float:
    """Share of the light leaving a polariser at 0° that also leaves ``steps`` more, in equal steps to 90°."""
    filters = [optics.jones_polarizer(90 * k / steps) for k in range(steps + 1)]
    return optics.transmission(filters) / optics.transmission(filters[:1])


#: Seeded pairs of random subspaces behind the expected smallest angle, drawn in blocks (the
#: figure's own 20 draws are one block; the spread of block means shows why one block misleads).
RANDOM_SUBSPACE_DRAWS, RANDOM_SUBSPACE_BLOCK = 1000, 20


def _smallest_random_angles(n: int, k: int) -> np.ndarray:
    """The smallest principal angle (degrees) between two random k-dim subspaces of R^n, for each of
    RANDOM_SUBSPACE_DRAWS seeded draws. A Gaussian subspace is uniform and the angles do not change
    under a rotation, so one of the two may as well be the first k coordinates: the cosine is the
    largest singular value of the first k rows of Q_R, by batched QR (a pair at a time through
    ``axioms.principal_angles`` was too slow for every build; the build checks two draws against it)."""
    rng = np.random.default_rng(0)
    out = []
    for _ in range(RANDOM_SUBSPACE_DRAWS // RANDOM_SUBSPACE_BLOCK):
        R = rng.standard_normal((RANDOM_SUBSPACE_BLOCK, n, k))
        cos = np.linalg.svd(np.linalg.qr(R)[0][:, :k], compute_uv=False)[:, 0]
        out.append(np.degrees(np.arccos(np.clip(cos, -1.0, 1.0))))
        if len(out) == 1:
            _holds(np.allclose(out[0][:2], [axioms.principal_angles(np.eye(n)[:, :k], R[i])[0] for i in range(2)],
                               atol=1e-9), "subspaces: the batched smallest angle is principal_angles'")
    return np.concatenate(out)


def subspaces() -> dict:
    """site/content/posts/composition-and-subspaces.md"""
    ruler = next(t for t in REGISTRY["projection-1d-2d"].run({})["figure"]["data"] if t.get("name") == "values y")
    three = _outputs("three-polarizers")
    crossed = REGISTRY["three-polarizers"].resolve({})
    best_middle = max(range(crossed["theta1"], crossed["theta3"] + 1),
                      key=lambda a: _outputs("three-polarizers", theta2=a)["transmission"])
    # two writers 30 degrees apart, each reader at right angles to the other writer
    w1, w2 = 0, 30
    apart = _outputs("communication", pairs="two", write1=w1, write2=w2, read1=w2 + 90, read2=w1 + 90)
    if max(apart["crosstalk"]) > 1e-12:
        raise ValueError("subspaces.separated_gain: the readers should hear no crosstalk")
    aligned = _outputs("communication", pairs="two", write1=0, write2=60, read1=0, read2=60)
    # the random-subspaces figure opens at GPT-2 small's widths, as its caption says
    rs = REGISTRY["random-subspaces"].resolve({})
    _holds((rs["n"], rs["k"]) == (GPT2_SMALL["d_model"], GPT2_SMALL["d_head"]),
           "the random-subspaces figure opens at GPT-2 small's d_model and d_head")
    smallest = _smallest_random_angles(GPT2_SMALL["d_model"], GPT2_SMALL["d_head"])
    blocks = smallest.reshape(-1, RANDOM_SUBSPACE_BLOCK).mean(axis=1)
    return {
        # points on the ruler of y values in the projection-1d-2d figure
        "ruler_points": len(ruler["x"]),
        # rank of the bottleneck u d^T at the figure's defaults
        "bottleneck_rank": _outputs("bottleneck")["rank"],
        # its rank once d (or u) is set to zero
        "bottleneck_rank_zero": _the_same("subspaces.bottleneck_rank_zero",
                                          [_outputs("bottleneck", d1=0.0, d2=0.0)["rank"],
                                           _outputs("bottleneck", u1=0.0, u2=0.0)["rank"]]),
        # field length leaving polarisers at 0, 45, 90 degrees from horizontal light of unit length
        "three_field": float(np.hypot(*np.asarray(three["matrix"])[:, 0])),
        # intensity leaving those three polarisers, as a fraction of what left the first
        "three_transmission": three["transmission"],
        # the middle polariser's angle (whole degrees between 0 and 90) that lets most light through
        "best_middle": best_middle,
        # share of light surviving 2, 10 and 50 equal steps from 0 to 90 degrees
        "chain_2": _chain(2),
        "chain_10": _chain(10),
        "chain_50": _chain(50),
        # order of magnitude of hidden-symmetry's max_output_change at its defaults (rounding error)
        "output_change_order": _power_of_ten(_outputs("hidden-symmetry")["max_output_change"]),
        # gain of each clean link when the two writers are 30 degrees apart
        "separated_gain": _the_same("subspaces.separated_gain", np.abs(np.diag(apart["transfer"]))),
        # singular values of T, writers and readers both at 0 and 60 degrees
        "aligned_sv1": aligned["singular_values"][0],
        "aligned_sv2": aligned["singular_values"][1],
        # GPT-2 small's residual stream and head widths
        "gpt2_d_model": GPT2_SMALL["d_model"],
        "gpt2_d_head": GPT2_SMALL["d_head"],
        # expected mean cos^2 of the principal angles between random head-sized subspaces: k / n
        "gpt2_random_cos2": str(Fraction(GPT2_SMALL["d_head"], GPT2_SMALL["d_model"])),
        # expected smallest principal angle (degrees) between random head-sized subspaces of GPT-2's
        # stream: the mean over the draws, its standard error, the spread of single draws, and the
        # lowest and highest mean of a block of RANDOM_SUBSPACE_BLOCK draws
        "gpt2_random_smallest_angle": float(smallest.mean()),
        "gpt2_random_smallest_se": float(smallest.std(ddof=1) / np.sqrt(smallest.size)),
        "gpt2_random_smallest_sd": float(smallest.std(ddof=1)),
        "gpt2_random_block_min": float(blocks.min()), "gpt2_random_block_max": float(blocks.max()),
        "random_subspace_draws": RANDOM_SUBSPACE_DRAWS, "random_subspace_block": RANDOM_SUBSPACE_BLOCK,
    }
