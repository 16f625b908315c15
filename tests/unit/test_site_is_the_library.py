"""The site's numbers are the library's: every score a figure shows for a shipped model equals
what a researcher gets from the library's public API on the same model, for each metric and mode
(issue 48: the site once chose the embedding ``token`` and ``whitened`` read on its own, and the
two differed by 6.8e-4 on the RMS model)."""

from __future__ import annotations

import numpy as np
import pytest

from headspace import model, store, weights
from headspace.composition import METRICS, MODES
from headspace_site.figure import shipped


@pytest.mark.parametrize("name", store.list_models())
@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("mode", MODES)
def test_a_figure_scores_what_the_library_scores(name, metric, mode):
    researcher = weights.from_model(model.load(name)).composition_scores(mode, metric)
    site = shipped.scores(name, None, mode, metric)
    np.testing.assert_array_equal(site, researcher)


@pytest.mark.parametrize("name", store.list_models())
def test_the_token_path_reads_the_embedding_the_library_names(name):
    """The token-path figure's map is ``composition.token_path`` on ``Weights.embedding_read``."""
    from headspace.composition import token_path
    from headspace_site.demos.token_path import path_matrix
    w = weights.from_model(model.load(name))
    A = w.W_V[0, 0] @ w.W_O[0, 0]
    B = w.W_Q[1, 0] @ w.W_K[1, 0].T
    want = token_path(A, B, W_E=w.embedding_read(), W_U=w.W_U, mode="Q")
    got = path_matrix(name, None, "Q", (0, 0), (1, 0))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
