"""Path ablation of every pair of heads of the shipped models, computed once and shipped as data.

``causal.path_ablation`` runs the model once per pair and mode: natively 0.3 to 0.8 s for one
model, checkpoint and mode, and in the browser 14 to 18 s for the first model switch of
composition-over-training (every checkpoint at once). The numbers depend only on the model files
and the fixed evaluation batch, so ``python -m headspace.demos._causal_table`` computes every
(model, step, mode) with the very call the demos make (``_shipped.model_scores(..., "causal")``)
into ``causal_table.json``, package data that ships in the wheel.

``lookup`` answers from the table only for a model whose files are the ones the table was computed
from (the sha256 of its config, weights and checkpoints in the manifest) with the same evaluation
batch; otherwise (a retrained model, another models directory) ``_shipped.scores`` computes the row
as before. ``tests/unit/test_causal_table.py`` recomputes a seeded sample of rows and compares.

>>> from headspace.demos import _shipped
>>> s = lookup(_shipped.models_where(), "attn-only-2l", 600, "K")
>>> s.shape, bool((s[~_shipped.later_mask(s.shape)] == 0).all())
((2, 4, 2, 4), True)
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import numpy as np

from headspace import store as _store
from headspace.composition import MODES

TABLE_FILE = Path(__file__).with_name("causal_table.json")
#: The model files the numbers depend on (the training curve is not read by path ablation).
_FILES = ("config.json", "weights.npz", "checkpoints.npz")


def _key(step: int | None, mode: str) -> str:
    return f"{'final' if step is None else int(step)}/{mode}"


def _fingerprint(entry: dict) -> dict:
    """What a model's rows depend on: its files' sha256 (from the manifest) and the batch."""
    from . import _shipped
    return {"files": {f: entry["files"][f]["sha256"] for f in _FILES if f in entry.get("files", {})},
            "eval_batch": _shipped.EVAL_BATCH, "eval_seed": _shipped.EVAL_SEED}


def compute_row(name: str, step: int | None, mode: str) -> list[float]:
    """Path ablation of every later pair of ``name`` at ``step`` (None: final weights), in the order of
    ``_shipped.later_pairs``: the demos' own call, nothing cached."""
    from . import _shipped
    s = _shipped.model_scores(_shipped.weights(name, step), name, mode, _shipped.CAUSAL)
    if np.any(s[~_shipped.later_mask(s.shape)] != 0):
        raise ValueError(f"path ablation of {name!r} at step {step}, mode {mode}: expected 0 wherever the "
                         "reader is not in a later layer than the writer")
    return [float(v) for v in _shipped.later_pairs(s)]


def write_table(path: Path = TABLE_FILE) -> Path:
    """Compute every row of every shipped model (about a minute natively) and save it."""
    from . import _shipped
    manifest = _store.read_manifest()
    models = {}
    for name, entry in manifest["models"].items():
        cfg = _store.read_config(name)
        shape = [cfg["n_layers"], cfg["n_heads"], cfg["n_layers"], cfg["n_heads"]]
        rows = {_key(step, mode): compute_row(name, step, mode)
                for step in (None, *_shipped.checkpoint_steps(name)) for mode in MODES}
        models[name] = {"fingerprint": _fingerprint(entry), "shape": shape, "rows": rows}
    path.write_text(json.dumps({"numpy": np.__version__, "models": models}, separators=(",", ":")) + "\n")
    return path


@lru_cache(maxsize=None)
def _table(where: str) -> dict:
    """``{model: (shape, rows)}`` for the models in ``where`` whose files the table was computed from;
    {} when this copy of the package lacks the file."""
    try:
        stored = json.loads(TABLE_FILE.read_text())["models"]
        manifest = _store.read_manifest(where)["models"]
    except (OSError, ValueError, KeyError):
        return {}
    return {name: (tuple(m["shape"]), m["rows"]) for name, m in stored.items()
            if name in manifest and m["fingerprint"] == _fingerprint(manifest[name])}


def lookup(where: str, name: str, step: int | None, mode: str) -> np.ndarray | None:
    """Path ablation [n_layers, n_heads, n_layers, n_heads] of ``name`` at ``step`` from the table,
    or None when the table has no row for exactly these model files."""
    shape, rows = _table(where).get(name, (None, {}))
    row = rows.get(_key(step, mode))
    if row is None:
        return None
    from . import _shipped
    out = np.zeros(shape)
    out[_shipped.later_mask(shape)] = row
    return out


if __name__ == "__main__":
    print(f"wrote {write_table()}")
