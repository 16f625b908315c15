"""Every number an article states, computed by the library at build time.

One function per article returns ``{name: value}``; ``compute()`` gathers them
under the article's key and scripts/prerender.py writes the result to
site/data/values.json. An article prints one with the ``value`` shortcode
(site/layouts/_shortcodes/value.html), which fails the build on an unknown key:

    {{< value "subspaces.gpt2_d_model" >}}             768
    {{< value key="subspaces.chain_10" digits=2 >}}    0.78

A value is a number or a short string. It is never a result typed in by hand:
each one calls ``headspace`` (mostly a registry demo, run exactly as the page
runs it), so the prose cannot drift from the code. The few inputs that come
from outside the library are named constants with their source. Where the
prose makes a claim about a whole range (the same transmission at every
angle), the function checks the claim and fails the build if it breaks.

tests/site/test_numbers.py fails on a bare number in an article's prose and
on a value that no article uses. To state a new number: add one line to the
article's function below, with a comment saying what it is, and write
``{{< value "article.name" >}}`` where the number goes.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from headspace import axioms, optics
from headspace.demos import REGISTRY

# GPT-2 small's shape (Radford et al. 2019; TransformerLens's "gpt2" config): an input, not a result.
GPT2_SMALL = {"d_model": 768, "d_head": 64}


def _outputs(demo: str, **params) -> dict:
    """The outputs of one registry demo, run as the page runs it."""
    return REGISTRY[demo].run(params)["outputs"]


def _the_same(name: str, values):
    """The one value every item of ``values`` has (to 1e-12), or fail the build naming ``name``."""
    values = list(values)
    if max(values) - min(values) > 1e-12:
        raise ValueError(f"{name}: the prose says these are all equal, but they range "
                         f"from {min(values)} to {max(values)}")
    return values[0]


def _power_of_ten(x: float) -> str:
    """``x``'s order of magnitude (its power of ten in scientific notation) as text, e.g. 3.9e-16 -> '10⁻¹⁶'."""
    exponent = math.floor(math.log10(abs(x)))
    return "10" + str(exponent).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))


def _chain(steps: int) -> float:
    """Share of the light leaving a polariser at 0° that also leaves ``steps`` more, in equal steps to 90°."""
    filters = [optics.jones_polarizer(90 * k / steps) for k in range(steps + 1)]
    return optics.transmission(filters) / optics.transmission(filters[:1])


def polariser() -> dict:
    """site/content/posts/polariser.md"""
    theta = next(p for p in REGISTRY["polarizer"].params if p.name == "theta")
    angles = np.arange(theta.min, theta.max + theta.step, theta.step)
    return {
        # fraction of unpolarised light a polariser passes, the same at every angle of the slider
        "transmission": _the_same("polariser.transmission",
                                  [_outputs("polarizer", theta=float(a))["transmission"] for a in angles]),
    }


RANDOM_SUBSPACE_DRAWS = 20


def _smallest_random_angle(n: int, k: int) -> float:
    """Mean over seeded draws of the smallest principal angle between two random k-dim subspaces of R^n."""
    rng = np.random.default_rng(0)
    return float(np.mean([axioms.principal_angles(rng.standard_normal((n, k)), rng.standard_normal((n, k)))[0]
                          for _ in range(RANDOM_SUBSPACE_DRAWS)]))


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
        # mean smallest principal angle (degrees) between random head-sized subspaces of GPT-2's stream
        "gpt2_random_smallest_angle": _smallest_random_angle(GPT2_SMALL["d_model"], GPT2_SMALL["d_head"]),
        "random_subspace_draws": RANDOM_SUBSPACE_DRAWS,
    }


def measuring() -> dict:
    """site/content/posts/measuring-composition.md"""
    return {}


def formalising() -> dict:
    """site/content/posts/formalising-composition.md"""
    return {}


ARTICLES = {"polariser": polariser, "subspaces": subspaces, "measuring": measuring, "formalising": formalising}


def compute() -> dict:
    """``{article: {name: value}}`` for every article, as site/data/values.json holds it."""
    out = {}
    for article, fn in ARTICLES.items():
        values = fn()
        for name, value in values.items():
            ok = isinstance(value, str) and len(value) <= 40 or \
                isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool) \
                and math.isfinite(value)
            if not ok:
                raise ValueError(f"{article}.{name}: a value is a finite number or a short string; got {value!r}")
        out[article] = {name: value.item() if isinstance(value, np.generic) else value
                        for name, value in values.items()}
    return out


if __name__ == "__main__":
    import json
    print(json.dumps(compute(), indent=1, ensure_ascii=False))
