"""Polarisers: the physical picture of a rank-1 projection.

A linear polariser at angle theta reads light along the unit vector
``u = (cos theta, sin theta)`` and writes it back along the same line. Its
Jones matrix is the rank-1 projector ``u u^T``: symmetric (``P = P^T``) and
idempotent (``P @ P = P``), because reading along a line you already lie on
changes nothing. Angles are in degrees.

>>> import numpy as np
>>> np.round(jones_polarizer(0), 12)       # horizontal: keeps x, drops y
array([[1., 0.],
       [0., 0.]])
>>> float(transmission([jones_polarizer(0)]))   # unpolarised light: half passes
0.5
"""

from __future__ import annotations

import numpy as np

from headspace.validate import as_array, as_number


def jones_polarizer(theta: float) -> np.ndarray:
    """Jones matrix ``[[c^2, cs], [cs, s^2]]`` of a linear polariser at ``theta`` degrees.

    >>> jones_polarizer(45).round(12).tolist()
    [[0.5, 0.5], [0.5, 0.5]]
    """
    t = np.deg2rad(as_number("theta", theta))
    u = np.array([np.cos(t), np.sin(t)])
    return np.outer(u, u)


def transmission(matrices) -> float:
    """Fraction of unpolarised light's intensity that passes ``matrices`` in order.

    Unpolarised light averages over every polarisation direction, so the
    transmitted intensity of a product M is ``||M||_F^2 / 2`` (the mean of
    ``|M e|^2`` over unit vectors e in the plane).

    >>> round(transmission([jones_polarizer(0), jones_polarizer(90)]), 12)
    0.0
    >>> round(transmission([jones_polarizer(0), jones_polarizer(45), jones_polarizer(90)]), 12)
    0.125
    """
    m = np.eye(2)
    for i, p in enumerate(matrices):
        m = as_array(f"matrices[{i}]", p, shape=(2, 2)) @ m
    return float(np.sum(m * m) / 2.0)
