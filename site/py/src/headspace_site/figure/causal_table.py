"""Path ablation of every pair of heads of the shipped models, computed once and shipped as data.

``causal.path_ablation`` runs the model once per pair and mode, and the first model switch of
composition-over-training asks for every checkpoint at once: far too slow for a reader waiting in
the browser (docs/decisions/0002-timings.md has the measurement). The numbers depend only on the model files
and the fixed evaluation batch, so ``python -m headspace_site.figure.causal_table`` computes every
(model, step, mode) with the very call the demos make (``shipped.model_scores(..., "causal")``)
into ``causal_table.json``, package data that ships in the wheel.

``shipped.causal_lookup`` reads the table (``shipped.scores(..., "causal")`` answers from it);
this module only computes and writes it. ``tests/unit/test_causal_table.py`` recomputes a seeded
sample of rows and compares.

>>> s = shipped.causal_lookup(shipped.models_where(), "attn-only-2l", 600, "K")
>>> s.shape, bool((s[~later_mask(s.shape)] == 0).all())
((2, 4, 2, 4), True)
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from headspace import store as _store
from headspace.composition import MODES
from headspace.head_pairs import later_mask

from . import shipped


def compute_row(name: str, step: int | None, mode: str) -> list[float]:
    """Path ablation of every later pair of ``name`` at ``step`` (None: final weights), in the order of
    ``shipped.later_pairs``: the demos' own call, nothing cached."""
    s = shipped.model_scores(shipped.weights(name, step), name, mode, shipped.CAUSAL)
    if np.any(s[~later_mask(s.shape)] != 0):
        raise ValueError(f"path ablation of {name!r} at step {step}, mode {mode}: expected 0 wherever the "
                         "reader is not in a later layer than the writer")
    return [float(v) for v in shipped.later_pairs(s)]


def write_table(path: Path = shipped.CAUSAL_TABLE) -> Path:
    """Compute every row of every shipped model and save it."""
    manifest = _store.read_manifest()
    models = {}
    for name, entry in manifest["models"].items():
        cfg = _store.read_config(name)
        shape = [cfg["n_layers"], cfg["n_heads"], cfg["n_layers"], cfg["n_heads"]]
        rows = {shipped.causal_key(step, mode): compute_row(name, step, mode)
                for step in (None, *shipped.checkpoint_steps(name)) for mode in MODES}
        models[name] = {"fingerprint": shipped.causal_fingerprint(entry), "shape": shape, "rows": rows}
    path.write_text(json.dumps({"numpy": np.__version__, "models": models}, separators=(",", ":")) + "\n")
    return path


if __name__ == "__main__":
    print(f"wrote {write_table()}")
