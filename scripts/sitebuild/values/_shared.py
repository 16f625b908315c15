"""What every article's values use: a demo run as the page runs it, the checks that fail the build
when a claim in words no longer holds, and the inputs that come from outside the library."""

from __future__ import annotations

import math

from headspace_site.demos import REGISTRY


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


def _holds(claim: bool, what: str) -> None:
    """Fail the build when a claim an article makes in words no longer holds."""
    if not claim:
        raise ValueError(f"an article says {what}, but the library no longer agrees")
