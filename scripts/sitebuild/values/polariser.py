"""The numbers site/content/posts/polariser.md states
(``{{< value "polariser.name" >}}``), and the claims in its prose this checks."""

from __future__ import annotations

import numpy as np

from headspace_site.demos import REGISTRY

from ._shared import _outputs, _the_same


def polariser() -> dict:
    """site/content/posts/polariser.md"""
    theta = next(p for p in REGISTRY["polarizer"].params if p.name == "theta")
    angles = np.arange(theta.min, theta.max + theta.step, theta.step)
    return {
        # fraction of unpolarised light a polariser passes, the same at every angle of the slider
        "transmission": _the_same("polariser.transmission",
                                  [_outputs("polarizer", theta=float(a))["transmission"] for a in angles]),
    }
