"""The composition-score benchmark: every weight score against every ground truth, on a zoo of models.

Why: a composition score is only useful if it ranks pairs of heads the way their causal effect
does, on models it was not tuned on. The zoo (``scripts/train_models --zoo``, files in ``zoo/``
at the top of the repository, outside the wheel) holds small transformers trained from five
seeds per configuration on tasks that each need one kind of composition
(``headspace.tasks``). For each model and mode (Q, K, V) and each pair of an earlier and a later
head, this module compares the weight scores of ``headspace.pair_scores`` with four ground
truths (``headspace.ground_truth``), measured on 20 held-out evaluation batches.

Statistics, per mode and group of models (a family: one configuration's seeds; a task; all):

* **Spearman**: rank correlation of a score with a ground truth over one model's pairs, averaged
  over the group's models;
* **AUROC**: how well the score separates the *causal* pairs (effect above ``threshold``: at
  least ``MIN_EFFECT`` nats and at least ``REL_EFFECT`` of the model's largest effect in that
  mode) from the rest; averaged over the models that have both kinds;
* **intervals**: 95% percentile intervals of a hierarchical bootstrap (``RESAMPLES`` draws):
  each draw resamples the seeds within every configuration of the group, then the evaluation
  batches of every model, both with replacement; the ground truth is recomputed on the drawn
  batches;
* **distinguishable**: two scores' statistics differ when the paired interval of their difference
  (the same draws for both) excludes 0. Scores that rank every pair alike by construction
  (``TWINS``) can never be told apart, so a count of separations counts each set of twins once
  (``separation``);
* **agreement**: the ground truths against each other, Spearman over a model's pairs in its task's
  mode, per model (interval over its batches) and as the median over the zoo (interval over the
  same hierarchical draws).

Two limits of this bootstrap. With five seeds a configuration, a draw of seeds is one of only 126
multisets (three seeds: ten), so the seed part of an interval rests on few distinct values. And a draw of batches
repeats some batches and leaves others out, so its ground truth is noisier than the one on all the
batches; a noisier ground truth correlates less with any score, so the draws' correlations lean
towards 0, and an estimate on all the data tends to sit in the upper part of its interval.

Files: ``zoo/ground_truth.npz`` (``compute_ground_truth``: per model ``[4 ground truths, 20
batches, 3 modes, L, H, L, H]``, minutes of numpy), then ``benchmark_table`` (seconds), which
``python -m headspace.benchmark`` writes to ``headspace/models/benchmark.json`` (``TABLE``) for the
site, and ``python -m headspace bench`` prints.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
import warnings
from pathlib import Path

import numpy as np

from headspace import store
from headspace.composition import MODES
from headspace.ground_truth import GROUND_TRUTHS, ground_truth, path_effects
from headspace.head_pairs import later_mask
from headspace.model import Model
from headspace.pair_scores import SCORES, weights_of
from headspace.stats import spearman_along
from headspace.tasks import CORPUS_TASKS, MODE_OF_TASK

__all__ = ["FAMILIES", "read_table", "zoo_dir", "zoo_models", "scored_models", "load_zoo_model", "compute_ground_truth", "compute_per_model", "read_ground_truth",
           "score_zoo", "benchmark_table", "auroc", "RESAMPLES", "MIN_EFFECT", "REL_EFFECT", "GT_NAMES",
           "SOLVED_LOSS", "CIRCUIT_EFFECT", "solves", "circuit_present", "TWINS", "twin_classes", "separation", "n_classes", "later_pairs",
           "modes_read", "positives", "eval_batches", "model_ground_truth"]

#: The zoo's configurations that the benchmark scores (scripts/train_zoo.py's CONFIGS but the one-layer
#: control, which has no pair of heads: ``scored_models``), by family name: task, normalisation,
#: attention only or with MLPs, layers. The demo declares its choices from this list, before the
#: table is read (the browser fetches the table only when the figure first runs).
FAMILIES = ("induction-none-attn-2l", "induction-rms-attn-2l", "induction-ln-mlp-2l", "induction-rms-attn-3l",
            "reverse-rms-attn-2l", "reverse-ln-mlp-2l", "recall-none-attn-2l", "lookup-rms-attn-2l",
            "words-none-attn-2l", "text-ln-mlp-2l",
            "reptext-none-attn-2l", "table-none-attn-2l")
RESAMPLES = 1000
LEVEL = 0.95             # of every interval
MIN_EFFECT = 0.02        # nats
REL_EFFECT = 0.2         # of the model's largest effect in the mode
#: A model *solves* its task when its held-out loss at the circuit's positions is under this many
#: nats (chance is ln 64 = 4.16, for lookup ln 76, recall ln 48): induction, reverse copy and recall 1 nat,
#: lookup ln 4 (what reading its two cues one at a time leaves, headspace.tasks); table 1 nat (one cue alone
#: leaves ln 4 on its Latin half; on its free half the shape's column 1.12, the colour's row 0.91: 1.26 and
#: 1.17 in all);
#: text (characters or words): 1 nat under its loss at step 0.
SOLVED_LOSS = {"induction": 1.0, "reverse": 1.0, "recall": 1.0, "lookup": float(np.log(4)),
               "table": 1.0, "text": 1.0,
               "words": 1.0, "reptext": 1.0}
#: The circuit a task needs is *present* when one path of the task's mode costs at least this many
#: nats by mean ablation at the circuit's positions.
CIRCUIT_EFFECT = 0.1
GT_NAMES = tuple(g[0] for g in GROUND_TRUTHS)
#: Scores that rank every pair of heads alike by construction, and the modes where they do: no draw of
#: seeds or batches can separate them. ``frobenius_baseline`` is ``frobenius`` minus a constant per
#: mode and shape; ``projection_kernel`` is ``d_head * subspace`` minus a constant when every head
#: has full rank (as in the zoo); ``token`` and ``whitened`` are one quantity for Q and K
#: (``headspace.composition``). The site's build checks each against the table.
TWINS = (("frobenius_baseline", "frobenius", "QKV"), ("projection_kernel", "subspace", "QKV"),
         ("token", "whitened", "QK"))
GROUND_TRUTH_FILE = "ground_truth.npz"
#: The table's modes: Q, K, V for every model, and "task": each model in its own task's mode.
TABLE_MODES = MODES + ("task",)
#: The fields of a row of the table: statistic, then its 95% interval.
ROW_FIELDS = ("group", "mode", "ground_truth", "score", "spearman", "spearman_lo", "spearman_hi",
              "auroc", "auroc_lo", "auroc_hi", "n_models", "n_models_auroc")
#: The table the site's demo and ``python -m headspace bench`` read: with the shipped models' data
#: (left out of the browser's wheel; the worker fetches it for the page that needs it).
TABLE = store.SHIPPED / "benchmark.json"


def solves(task: str, loss: float, loss_at_step_0: float) -> bool:
    """Whether a model of ``task`` with held-out circuit-position loss ``loss`` solves it (``SOLVED_LOSS``)."""
    if task in CORPUS_TASKS:
        return loss < loss_at_step_0 - SOLVED_LOSS[task]
    return loss < SOLVED_LOSS[task]


def circuit_present(task: str, mean_circuit) -> bool:
    """Whether the largest path of ``task``'s mode in ``mean_circuit`` (``[3 modes, ...]``, nats, mean
    ablation at the circuit's positions) reaches ``CIRCUIT_EFFECT``."""
    return float(np.max(np.asarray(mean_circuit)[MODES.index(MODE_OF_TASK[task])])) >= CIRCUIT_EFFECT


def zoo_dir(path=None) -> Path:
    """The zoo's directory: ``path``, else ``$HEADSPACE_ZOO``; it must hold a ``manifest.json``."""
    where = path if path is not None else os.environ.get("HEADSPACE_ZOO")
    if where is None:
        raise ValueError("zoo must be given (--zoo DIR or $HEADSPACE_ZOO): the directory of the benchmark's "
                         "models, zoo/ in a checkout of the repository; got neither")
    where = Path(where)
    if not (where / store.MANIFEST).is_file():
        raise ValueError(f"zoo must be a directory with a {store.MANIFEST}; got {str(where)!r}")
    return where


def zoo_models(zoo) -> dict[str, dict]:
    """``{name: manifest entry}`` of the zoo's models (task, family, seed, ...), in manifest order."""
    return store.read_manifest(zoo_dir(zoo))["models"]


def scored_models(zoo) -> dict[str, dict]:
    """``zoo_models`` without the one-layer models (the recall task's control): a model with one layer has
    no pair of an earlier and a later head, so there is nothing for a score to rank; they are trained,
    measured and tested as the others, but the benchmark's table and scorecard leave them out."""
    zoo = zoo_dir(zoo)
    return {n: e for n, e in zoo_models(zoo).items() if store.read_config(zoo / n)["n_layers"] >= 2}


def load_zoo_model(zoo, name: str) -> Model:
    """One zoo model, sha256-checked against the zoo's manifest."""
    return Model.from_stored(store.read_model(zoo_dir(zoo) / name))


def eval_batches(zoo, task: str) -> tuple[np.ndarray, np.ndarray]:
    """``(tokens [n_batches, batch, seq], mask [n_batches, batch, seq-1])``: a task's evaluation batches."""
    with np.load(zoo_dir(zoo) / "eval" / f"{task}.npz") as f:
        return f["tokens"], f["mask"]


def model_ground_truth(model: Model, tokens: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """``[4, n_batches, 3, L, H, L, H]``: each ground truth (``GROUND_TRUTHS`` order) on each batch, every mode."""
    L, H = model.config["n_layers"], model.config["n_heads"]
    out = np.zeros((len(GROUND_TRUTHS), len(tokens), len(MODES), L, H, L, H))
    for b, (toks, m) in enumerate(zip(tokens, mask)):
        for ablation in ("mean", "resample"):
            effects = path_effects(model, toks, "QKV", ablation)
            for g, (_, abl, where) in enumerate(GROUND_TRUTHS):
                if abl == ablation:
                    out[g, b] = ground_truth(effects, None if where == "all" else m)
    return out


def compute_per_model(zoo, file: str, compute, names=None, progress=print, what: str = "ground truths") -> Path:
    """``compute(model, tokens, mask)`` (float32) for every model of the zoo on its task's evaluation
    batches, or for those of ``names`` (the others' kept from ``file``); written to ``zoo/file``, one
    array per model. The one loop behind ``compute_ground_truth`` and ``controlled.compute_zoo``."""
    zoo = zoo_dir(zoo)
    models = zoo_models(zoo)
    out = {}
    if names is not None:
        unknown = sorted(set(names) - set(models))
        if unknown:
            raise ValueError(f"names must be models of the zoo's manifest; got {unknown}")
        if (zoo / file).is_file():
            with np.load(zoo / file) as f:
                out = {k: f[k] for k in f.files if k in models}
    for name, entry in models.items():
        if names is not None and name not in names:
            continue
        t0 = time.perf_counter()
        tokens, mask = eval_batches(zoo, entry["task"])
        out[name] = np.asarray(compute(load_zoo_model(zoo, name), tokens, mask)).astype(np.float32)
        if progress:
            progress(f"{name}: {what} in {time.perf_counter() - t0:.1f} s")
    store.save_npz(zoo / file, {name: out[name] for name in models if name in out})
    return zoo / file


def compute_ground_truth(zoo, names=None, progress=print) -> Path:
    """Compute every model's ground truths (or those of ``names``, keeping the others' on file) on its
    task's evaluation batches; write ``ground_truth.npz``."""
    return compute_per_model(zoo, GROUND_TRUTH_FILE, model_ground_truth, names, progress)


def read_ground_truth(zoo) -> dict[str, np.ndarray]:
    with np.load(zoo_dir(zoo) / GROUND_TRUTH_FILE) as f:
        return {k: f[k].astype(np.float64) for k in f.files}


#: The built-in scores (``pair_scores.SCORES``) already computed in this process, by the hash of a
#: model's config and weights and the score's name. ``python -m headspace bench --score`` computes the
#: zoo's scores for the benchmark table and again for the scorecard, and a researcher comparing scores of
#: their own computes the same built-in ones each time: 20 of a call's 34 s, twice (decision 0010).
_BUILT_IN: dict[tuple[str, str], np.ndarray] = {}


def weights_hash(stored: store.Stored) -> str:
    """sha256 over a stored model's config and every weight (name, dtype, shape, bytes): equal exactly
    when the scores of one set of weights must be equal.

    >>> a = store.read_model("attn-only-2l"); b = store.read_model("attn-only-2l")
    >>> weights_hash(a) == weights_hash(b) != weights_hash(store.read_model("attn-only-2l-rms"))
    True
    """
    h = hashlib.sha256(json.dumps(stored.config, sort_keys=True).encode())
    for key in sorted(stored.state):
        arr = np.ascontiguousarray(stored.state[key])
        h.update(f"{key}|{arr.dtype.str}|{arr.shape}".encode())
        h.update(arr.tobytes())
    return h.hexdigest()


def score_zoo(zoo, scores=None) -> dict[str, dict[str, np.ndarray]]:
    """``{model: {score: [3 modes, L, H, L, H]}}`` for ``scores`` (``{name: fn(weights, mode)}``; default all).

    Every score is called as ``fn(pair_scores.weights_of(model), mode)``: a ``Weights`` with norm
    scales folded in (and the stored ones beside), as ``python -m headspace bench --score`` does. A
    built-in score (the function ``pair_scores.SCORES`` holds under that name) is computed once per
    process and set of weights (``weights_hash``); any other function is called every time.
    """
    scores = SCORES if scores is None else scores
    out = {}
    for name in scored_models(zoo):
        stored = store.read_model(zoo_dir(zoo) / name)
        model = Model.from_stored(stored)
        w = weights_of(model)
        key = weights_hash(stored)
        out[name] = {}
        for s, fn in scores.items():
            built_in = SCORES.get(s) is fn
            if built_in and (key, s) in _BUILT_IN:
                out[name][s] = _BUILT_IN[key, s].copy()
                continue
            arr = np.stack([np.asarray(fn(w, m), dtype=float) for m in MODES])
            L, H = model.config["n_layers"], model.config["n_heads"]
            if arr.shape != (3, L, H, L, H) or not np.all(np.isfinite(arr)):
                raise ValueError(f"score {s!r} must return a finite [n_layers, n_heads, n_layers, n_heads] = "
                                 f"{[L, H, L, H]} array for every mode; got shape {list(arr.shape[1:])} on {name}")
            if built_in:
                _BUILT_IN[key, s] = arr.copy()
            out[name][s] = arr
    return out


# --------------------------------------------------------------------------- statistics

def later_pairs(n_layers: int, n_heads: int) -> np.ndarray:
    """Flat indices into ``[n_layers, n_heads, n_layers, n_heads]`` of the pairs that can compose.

    ``head_pairs.later_mask``'s True entries in C order (``l1, h1, l2, h2``, the reader's layer
    after the writer's): the order of every per-pair list in the table.

    >>> later_pairs(2, 2).tolist()           # writers L0H0, L0H1 into readers L1H0, L1H1
    [2, 3, 6, 7]
    """
    return np.flatnonzero(later_mask((n_layers, n_heads, n_layers, n_heads)))


def auroc(score, positive) -> float:
    """Area under the ROC curve of ``score`` at separating ``positive`` pairs from the rest.

    The probability that a random positive outscores a random negative, ties counting half
    (Mann-Whitney). NaN without both classes.

    >>> auroc([0.9, 0.8, 0.1, 0.3], [True, True, False, False]), auroc([1, 1, 1], [True, False, False])
    (1.0, 0.5)
    """
    s = np.asarray(score, float)
    p = np.asarray(positive, bool)
    if s.shape != p.shape or s.ndim != 1:
        raise ValueError(f"score and positive must be 1-d of the same length; got {list(s.shape)} and {list(p.shape)}")
    if p.all() or not p.any():
        return float("nan")
    d = s[p][:, None] - s[~p][None]
    return float(((d > 0) + 0.5 * (d == 0)).mean())


def positives(effect: np.ndarray) -> np.ndarray:
    """Which pairs are causal: effect at least ``MIN_EFFECT`` nats and ``REL_EFFECT`` of the largest (last axis)."""
    top = effect.max(axis=-1, keepdims=True)
    return (effect >= MIN_EFFECT) & (effect >= REL_EFFECT * top)


def _auroc_rows(scores: np.ndarray, effects: np.ndarray) -> np.ndarray:
    """AUROC of every score ``[S, P]`` for the positives of every effect row ``[R, P]``: ``[R, S]``."""
    pos = positives(effects).astype(float)                      # [R, P]
    neg = 1.0 - pos
    d = scores[:, :, None] - scores[:, None, :]                 # [S, P, P]
    C = (d > 0) + 0.5 * (d == 0)
    num = np.einsum("ri,sij,rj->rs", pos, C, neg, optimize=True)
    den = (pos.sum(-1) * neg.sum(-1))[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)


def _interval(values: np.ndarray) -> tuple[float, float]:
    v = values[np.isfinite(values)]
    if v.size == 0:
        return float("nan"), float("nan")
    lo, hi = np.quantile(v, [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
    return float(lo), float(hi)


#: What the table keeps of each model's recorded mechanism (``headspace.mechanisms``): its label and the
#: designed one, the pair and mode it rests on, the path's effect (nats) and the evidence in words.
MECHANISM_FIELDS = ("label", "designed", "writer", "reader", "mode", "effect", "evidence")


def _mechanism_summary(zoo, name: str) -> dict:
    rec = store.read_json(zoo, name, store.MECHANISM_FILE)
    return {k: rec[k] for k in MECHANISM_FIELDS}


def benchmark_table(zoo, scores=None, resamples: int = RESAMPLES, seed: int = 0,
                    ground_truths=None) -> dict:
    """Scores, ground truths and statistics of the whole zoo, as a JSON-ready dict.

    ``scores``: ``{name: fn(weights, mode)}`` (default ``pair_scores.SCORES``; see ``score_zoo``); ``ground_truths``:
    ``read_ground_truth(zoo)`` unless given. See the module docstring for the statistics.
    """
    zoo = zoo_dir(zoo)
    entries = scored_models(zoo)
    gts = read_ground_truth(zoo) if ground_truths is None else ground_truths
    scored = score_zoo(zoo, scores)
    names = list(entries)
    score_names = list(next(iter(scored.values())))
    rng = np.random.default_rng(seed)
    S, G, R = len(score_names), len(GT_NAMES), resamples
    # per model, mode and ground truth: bootstrap rows of batches -> spearman [R+1, S], auroc [R+1, S]
    rho = np.full((len(names), 4, G, R + 1, S), np.nan)      # modes Q, K, V, then each model's own
    roc = np.full_like(rho, np.nan)
    models_out, agreement = [], []
    agree_own = {}          # "a|b" -> per model [R+1]: Spearman of two ground truths in the model's own mode
    for k, name in enumerate(names):
        e = entries[name]
        cfg = store.read_config(zoo / name)
        idx = later_pairs(cfg["n_layers"], cfg["n_heads"])
        gt = gts[name].reshape(G, gts[name].shape[1], 3, -1)[..., idx]          # [G, B, 3, P]
        n_b = gt.shape[1]
        draws = rng.integers(0, n_b, (R, n_b))
        weights = np.zeros((R + 1, n_b))
        weights[0] = 1.0 / n_b
        np.add.at(weights, (np.repeat(np.arange(1, R + 1), n_b), draws.ravel()), 1.0 / n_b)
        sc = np.stack([scored[name][s].reshape(3, -1)[:, idx] for s in score_names], 1)   # [3, S, P]
        pairs = {"pairs": [[int(i) for i in np.unravel_index(j, (cfg["n_layers"], cfg["n_heads"]) * 2)] for j in idx],
                 "scores": {s: np.round(sc[:, i], 5).tolist() for i, s in enumerate(score_names)},
                 "ground_truth": {g: np.round(gt[i].mean(0), 6).tolist() for i, g in enumerate(GT_NAMES)}}
        agree = {}
        own = MODES.index(MODE_OF_TASK[e["task"]])
        for mi, mode in enumerate(MODES):
            boot = np.einsum("rb,gbp->grp", weights, gt[:, :, mi])                 # [G, R+1, P]
            for g in range(G):
                rho[k, mi, g] = spearman_along(sc[mi][None], boot[g][:, None])
                roc[k, mi, g] = _auroc_rows(sc[mi], boot[g])
            # agreement of the ground truths with each other: spearman over pairs, batch bootstrap
            for a in range(G):
                for b in range(a + 1, G):
                    r = spearman_along(boot[a], boot[b])
                    agree[f"{mode}:{GT_NAMES[a]}|{GT_NAMES[b]}"] = [round(float(r[0]), 4),
                                                                   *[round(x, 4) for x in _interval(r[1:])]]
                    if mi == own:
                        agree_own.setdefault(f"{GT_NAMES[a]}|{GT_NAMES[b]}", []).append(r)
        rho[k, 3], roc[k, 3] = rho[k, own], roc[k, own]
        agreement.append(agree)
        curve = store.read_training_curve(zoo / name)
        models_out.append({"name": name, "task": e["task"], "family": e["family"], "seed": e["seed"],
                           "heldout_loss": curve["heldout_loss"][-1],
                           "heldout_circuit_loss": curve["heldout_circuit_loss"][-1],
                           "circuit_loss_at_step_0": curve["heldout_circuit_loss"][0],
                           "n_layers": cfg["n_layers"], "n_heads": cfg["n_heads"], "d_model": cfg["d_model"],
                           "d_head": cfg["d_head"],
                           "normalization_type": cfg.get("normalization_type"), "mlp": not cfg["attn_only"],
                           "steps": e.get("steps"), "train_seconds": e.get("train_seconds"),
                           "mechanism": _mechanism_summary(zoo, name), **pairs})
    # groups: all, each task, each family; seeds resampled within families
    families = list(dict.fromkeys(m["family"] for m in models_out))
    tasks = list(dict.fromkeys(m["task"] for m in models_out))
    groups = {"all": names}
    groups.update({t: [m["name"] for m in models_out if m["task"] == t] for t in tasks})
    groups.update({f: [m["name"] for m in models_out if m["family"] == f] for f in families})
    pick = {}     # per family: [R, n_seeds] model indices drawn with replacement (draw 0: all, once)
    for f in families:
        members = [names.index(m["name"]) for m in models_out if m["family"] == f]
        draws = rng.integers(0, len(members), (R, len(members)))
        pick[f] = np.concatenate([np.array(members)[None], np.array(members)[draws]], 0)
    # the ground truths' agreement over the zoo: the median over models, on the same draws as the table
    everyone = np.concatenate([pick[f] for f in families], 1)                        # [R+1, n]
    agreement_median = {}
    for key, per_model in agree_own.items():
        draws_ = np.stack(per_model)[everyone, np.arange(R + 1)[:, None]]            # [R+1, n]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            agreement_median[key] = _stat(np.nanmedian(draws_, axis=1))
    rows, comparisons = [], []
    for gname, members in groups.items():
        fams = [f for f in families if any(names[i] in members for i in pick[f][0])]
        chosen = np.concatenate([pick[f] for f in fams], 1)                          # [R+1, n]
        for mi, mode in enumerate(TABLE_MODES):
            for g, gt_name in enumerate(GT_NAMES):
                with warnings.catch_warnings():          # a draw with no model that has causal pairs: NaN
                    warnings.simplefilter("ignore", RuntimeWarning)
                    r_rho = np.nanmean(rho[chosen, mi, g, np.arange(R + 1)[:, None]], axis=1)   # [R+1, S]
                    r_roc = np.nanmean(roc[chosen, mi, g, np.arange(R + 1)[:, None]], axis=1)
                n_roc = int(np.isfinite(roc[chosen[0], mi, g, 0, 0]).sum())
                for s, sname in enumerate(score_names):
                    rows.append([gname, mode, gt_name, sname, *_stat(r_rho[:, s]), *_stat(r_roc[:, s]),
                                 len(members), n_roc])
                # every pair of scores, paired on the same draws: is the difference of Spearman clear of 0?
                diff = r_rho[:, :, None] - r_rho[:, None, :]
                # an undefined difference (a score constant on every drawn model) counts as no difference
                lo, hi = np.quantile(np.nan_to_num(diff[1:], nan=0.0), [(1 - LEVEL) / 2, (1 + LEVEL) / 2], axis=0)
                comparisons.append([gname, mode, gt_name, ((lo > 0) | (hi < 0)).astype(int).tolist()])
    tokens, _ = eval_batches(zoo, models_out[0]["task"])
    return {"format_version": 1, "n_batches": int(tokens.shape[0]), "batch": int(tokens.shape[1]),
            "scores": score_names, "ground_truths": list(GT_NAMES), "modes": list(MODES), "table_modes": list(TABLE_MODES),
            "mode_of_task": MODE_OF_TASK, "families": families, "tasks": tasks, "resamples": R,
            "threshold": {"min_effect": MIN_EFFECT, "rel_effect": REL_EFFECT},
            "models": models_out, "agreement": agreement, "agreement_median": agreement_median,
            "row_fields": ROW_FIELDS, "rows": rows, "comparisons": comparisons}


def twin_classes(scores, modes) -> list[list[str]]:
    """``scores`` grouped into classes of ``TWINS`` for models read in ``modes`` (every one of them
    must be a mode where the two are twins); each class in ``scores`` order.

    >>> twin_classes(["frobenius", "token", "whitened", "frobenius_baseline"], "K")
    [['frobenius', 'frobenius_baseline'], ['token', 'whitened']]
    >>> twin_classes(["frobenius", "token", "whitened"], "KV")
    [['frobenius'], ['token'], ['whitened']]
    """
    cls = {s: {s} for s in scores}
    for a, b, where in TWINS:
        if a in cls and b in cls and set(modes) <= set(where):
            merged = cls[a] | cls[b]
            for s in merged:
                cls[s] = merged
    out = []
    for s in scores:
        members = [x for x in scores if x in cls[s]]
        if members not in out:
            out.append(members)
    return out


def separation(table: dict, group: str, mode: str, ground_truth: str, score: str) -> tuple[list[str], list[list[str]]]:
    """Which other scores ``score``'s Spearman is separated from, twins counted once.

    Returns ``(twins, not_separated)``: ``score``'s own twins (never separable), and the other
    classes of twins (``twin_classes``, for the modes ``group`` is read in under ``mode``) that the
    paired bootstrap does not separate from it. The classes it is separated from number
    ``len(classes) - 1 - len(not_separated)``.
    """
    matrix = next((m for g, mo, gt, m in table["comparisons"] if (g, mo, gt) == (group, mode, ground_truth)), None)
    if matrix is None:
        raise ValueError(f"group, mode and ground_truth must name a row of the table; got {group!r}, {mode!r}, "
                         f"{ground_truth!r}")
    index = {s: i for i, s in enumerate(table["scores"])}
    classes = twin_classes(table["scores"], modes_read(table, group, mode))
    own = next(c for c in classes if score in c)
    apart = [c for c in classes if c is not own and not all(matrix[index[score]][index[s]] for s in c)]
    return [s for s in own if s != score], apart


def n_classes(table: dict, group: str, mode: str) -> int:
    """How many classes of twins the table's scores form for ``group`` read in ``mode``."""
    return len(twin_classes(table["scores"], modes_read(table, group, mode)))


def modes_read(table: dict, group: str, mode: str) -> set[str]:
    """The modes ``group``'s models are read in under the table's ``mode`` (``task``: each its task's).

    >>> t = {"mode_of_task": {"induction": "K", "reverse": "V"},
    ...      "models": [{"task": "induction", "family": "i"}, {"task": "reverse", "family": "r"}]}
    >>> sorted(modes_read(t, "all", "task")), modes_read(t, "r", "Q")
    (['K', 'V'], {'Q'})
    """
    if mode != "task":
        return {mode}
    return {table["mode_of_task"][m["task"]] for m in table["models"] if group in ("all", m["task"], m["family"])}


def read_table(path=None) -> dict:
    """The benchmark table shipped with the package (``TABLE``), or the one at ``path``."""
    path = Path(path) if path is not None else store.models_dir() / TABLE.name
    try:
        return json.loads(path.read_bytes())
    except FileNotFoundError:
        raise ValueError(f"model file {path} is missing") from None


def _stat(values: np.ndarray) -> list:
    """``[estimate, lo, hi]`` rounded: draw 0 is the estimate on all the data, the rest the bootstrap."""
    return [None if not np.isfinite(values[0]) else round(float(values[0]), 4),
            *[None if not np.isfinite(x) else round(x, 4) for x in _interval(values[1:])]]


def main(argv=None) -> None:
    import argparse
    ap = argparse.ArgumentParser(description="Recompute the zoo's ground truths and the benchmark table.")
    ap.add_argument("--zoo", help="the zoo directory (default $HEADSPACE_ZOO)")
    ap.add_argument("--ground-truth", action="store_true", help="recompute zoo/ground_truth.npz first (minutes)")
    ap.add_argument("--only", help="with --ground-truth: recompute only the models whose name starts with one of "
                                   "these (comma-separated), keeping the others' on file")
    ap.add_argument("--out", type=Path, default=TABLE)
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    if args.ground_truth:
        names = None if not args.only else [n for n in zoo_models(args.zoo) if n.startswith(tuple(args.only.split(",")))]
        compute_ground_truth(args.zoo, names)
    table = benchmark_table(args.zoo)
    args.out.write_text(json.dumps(table, separators=(",", ":")) + "\n")
    print(f"wrote {args.out} ({args.out.stat().st_size / 1e3:.0f} kB) in {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
