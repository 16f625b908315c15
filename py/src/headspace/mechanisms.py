"""Mechanisms: what a zoo model actually does, measured from its attention and its path effects.

Why: each task of the zoo (``headspace.tasks``) is designed for one mechanism, say a
previous-token head whose output an induction head's keys read. A trained model may solve the
task another way (layer-0 heads that look five positions back and a layer-1 head that looks
six positions after the earlier occurrence: a shifted window), or not at all. A benchmark that
judges composition scores by a model's circuit must know which circuit is there, so every
model is labelled by the mechanism it uses, measured, not by the task it was trained on.

What is measured, on the first ``N_BATCHES`` (20) evaluation batches of the model's task (each
position ``t`` of the task's mask, where the circuit acts):

* ``back [n_layers, n_heads, 8]``: the writer's pattern, attention from ``p`` to ``p - d``,
  ``d = 1 .. 8``, at the positions ``p`` where the designed reader reads the writer's output:
  the positions the reader is designed to attend to (the ``target`` below: the keys of an
  induction head, the earlier occurrence in reverse copy and recall), or, for lookup's
  Q-composition, the question itself. ``previous`` is ``d = 1``; ``window`` the largest share at
  ``d >= 2``. (A recall model's previous-token heads attend to the previous token at the keys,
  0.86-0.93, and elsewhere to other things: 0.25 over every position.) In natural text
  (``TEXT_TASKS``) the reader's targets are selected (below), and a selection of positions can
  lift a head over the threshold, so there the writer is measured at every position of every
  sequence; ``back_at_target`` (the selected targets) and ``back_at_keys`` (the successors of
  every earlier occurrence of the pair) are recorded beside it.
* ``around [n_layers, n_heads, 15]``: attention from a mask position ``t`` to ``j + k``,
  ``k = -7 .. 7``, where ``j`` is the *anchor* the task names: the earlier occurrence of the
  current token (induction), of the current two tokens (text, words, reptext: named only where
  the pair occurred exactly once before, see below), of the plain token whose
  partner is current (reverse), of the key asked for, in its value pair (recall). ``target``
  is the designed reader's position (``k = +1`` for the copying tasks, ``k = 0`` for reverse
  and recall), ``answer`` the position of the answer token itself (``k = -1`` for reverse and
  recall); lookup's ``target`` is the dictionary entry with the cues' colour and shape (chance
  1/16 over the entries), ``entries`` the attention to all 16 entries and ``entry_share`` the
  right entry's share of it (chance 1/16); table's ``target`` is the cell with the cues' colour
  and shape, ``entries`` and ``entry_share`` over its 32 cells (chance 1/32).
* ``path``: the mean-ablation path effect (``headspace.ground_truth.path_effects``, nats,
  averaged over the mask's positions and the batches) of every pair in every mode.

In natural text a pair of tokens often occurred several times before (8.2 times on average at
the masked positions of ``reptext``'s first 4 evaluation batches, 4.0 in ``text``'s, 3.3 in ``words``'), and
an induction head spreads its attention over the tokens after all of them, each a fair guess; its
share on the last one's successor then says little (a ``reptext`` model's reader: 0.26 there, 0.72
on all of them, where a head that spreads its attention evenly gets 0.25). So for these tasks
the anchor is named only where the pair occurred exactly once before: there the designed reader
has one target, as in the synthetic tasks. The selection applies to the reader's measure only
(docs/decisions/0004-zoo-mechanisms.md, section 7); the writer is measured at every position, and
the path effects are averaged over every masked position.

The label follows from ``ATTENTION`` and ``PATH``, stated once here: a head *does* a pattern
when its mean attention there is at least ``ATTENTION``; a mechanism is *used* when the path
from a writer that does its pattern to a reader that does its pattern, in the mechanism's mode,
has an effect of at least ``PATH`` nats. ``LABELS`` lists the labels and what each needs.

>>> import numpy as np
>>> from headspace.model import Model
>>> rng = np.random.default_rng(0)
>>> tokens = rng.integers(0, 8, (2, 12)); mask = np.zeros((2, 11), bool); mask[:, 8:] = True
>>> anchors = named_positions("induction", tokens, mask)      # j + 1 where the current token recurred
>>> sorted(anchors), anchors["anchor"].shape
(['anchor'], (2, 11))
>>> THRESHOLDS
{'attention': 0.3, 'path': 0.1}
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

from headspace import store
from headspace.composition import MODES
from headspace.ground_truth import ground_truth, path_effects
from headspace.tasks import (MODE_OF_TASK, PARTNER, RECALL_ASK, RECALL_KEY, TABLE_CELLS, TABLE_COLOUR, TABLE_SHAPE,
                             TABLE_SHAPES, TASKS, TRIAL_TASKS)

__all__ = ["ATTENTION", "PATH", "THRESHOLDS", "N_BATCHES", "TEXT_TASKS", "LABELS", "MECHANISM_FILE",
           "named_positions", "measure", "label", "record", "read", "main"]

#: A head does a pattern when its mean attention there is at least this (a uniform head over the
#: 16 to 64 positions of a zoo sequence puts 0.02 to 0.06 on any one position).
ATTENTION = 0.3
#: A mechanism is used when its designed path's mean-ablation effect reaches this many nats
#: (``headspace.benchmark.CIRCUIT_EFFECT``, the zoo's "formed" threshold, is the same number).
PATH = 0.1
THRESHOLDS = {"attention": ATTENTION, "path": PATH}
#: Evaluation batches measured (16 sequences each, every batch the zoo's evaluation set holds): attention
#: shares to 0.01, and a designed path's effect to about 0.01 nats (its bootstrap interval over the batches is
#: recorded, ``effect_interval``); on 4 batches a near-threshold path's label could flip with the batches.
N_BATCHES = 20
#: Tasks on natural text, whose anchors are selected (named only where the pair occurred once before);
#: their writer is measured at every position instead (module docstring).
TEXT_TASKS = ("text", "words", "reptext")
MECHANISM_FILE = store.MECHANISM_FILE
BACK = 8                  # offsets d = 1 .. BACK of the writer's pattern
AROUND = 7                # offsets k = -AROUND .. AROUND of the reader's pattern about the anchor

#: label: (the mode of its path, what it needs). Which labels a task can get: ``_TASK_LABELS``.
LABELS = {
    "previous-token induction": ("K", "a head attends to the previous token; a later head attends to the token "
                                      "after the earlier occurrence (anchor + 1); the K path between them"),
    "shifted-window induction": ("KV", "a head attends d >= 2 positions back; a later head attends k >= 2 "
                                       "positions after the earlier occurrence; the larger of the K and V paths "
                                       "between them"),
    "previous-token V-composition": ("V", "a head attends to the previous token; a later head attends to the "
                                          "anchor (the earlier occurrence, whose predecessor is the answer); the V "
                                          "path between them"),
    "direct attention to the answer": ("QK", "a later head attends to the answer's own position (anchor - 1); the "
                                             "larger of the Q and K paths into it"),
    "entry lookup": ("Q", "a later head attends to the dictionary entry with both cues' attributes; the Q path "
                          "into it from a head that attends to the previous token"),
    "diffuse lookup": ("QKV", "no head attends to the right entry, yet some path reaches the threshold: the task "
                              "is answered from attention spread over many entries"),
    "none formed": ("", "no labelled mechanism's path reaches the threshold"),
}
_TASK_LABELS = {"induction": ("previous-token induction", "shifted-window induction"),
                "text": ("previous-token induction", "shifted-window induction"),
                "words": ("previous-token induction", "shifted-window induction"),
                "reptext": ("previous-token induction", "shifted-window induction"),
                "reverse": ("previous-token V-composition", "direct attention to the answer"),
                "recall": ("previous-token V-composition", "direct attention to the answer"),
                "lookup": ("entry lookup", "diffuse lookup"), "table": ("entry lookup", "diffuse lookup")}
#: the tasks that look an entry up, and how many entries open their sequences (the positions a reader
#: attends to: lookup's 16 entry tokens, table's 32 cells)
_ENTRIES = {"lookup": 16, "table": TABLE_CELLS}
#: the reader's designed position relative to the anchor, and the answer token's own
_TARGET = {"induction": 1, "text": 1, "words": 1, "reptext": 1, "reverse": 0, "recall": 0}
_ANSWER = {"reverse": -1, "recall": -1}


def named_positions(task: str, tokens, mask) -> dict[str, np.ndarray]:
    """``{"anchor": [batch, seq-1]}`` (the lookup task: ``{"entry": ...}``): for each loss position
    ``t`` in ``mask``, the position the task names (module docstring), or -1 where there is none.

    >>> toks = np.array([[5, 6, 7, 5, 6, 7]]); m = np.array([[0, 0, 1, 1, 1]], bool)
    >>> named_positions("induction", toks, m)["anchor"].tolist()     # token 5 at t=3 recurs from j=0
    [[-1, -1, -1, 0, 1]]
    """
    if task not in TASKS + TRIAL_TASKS:
        raise ValueError(f"task must be one of {list(TASKS + TRIAL_TASKS)}; got {task!r}")
    tokens, mask = np.asarray(tokens), np.asarray(mask, dtype=bool)
    if tokens.ndim != 2 or mask.shape != (tokens.shape[0], tokens.shape[1] - 1):
        raise ValueError(f"tokens must be [batch, seq] and mask [batch, seq-1]; got tokens {list(tokens.shape)}, "
                         f"mask {list(mask.shape)}")
    out = np.full(mask.shape, -1, dtype=np.int64)
    for b, t in zip(*np.nonzero(mask)):
        row = tokens[b]
        if task == "lookup":
            entries = row[:16]
            colour, shape = row[t - 1] - 64, row[t] - 68          # tasks.COLOUR_CUE, tasks.SHAPE_CUE
            hit = np.flatnonzero((entries // 16 == colour) & (entries // 4 % 4 == shape))
        elif task == "table":
            hit = [(row[t - 1] - TABLE_COLOUR) * TABLE_SHAPES + row[t] - TABLE_SHAPE]
        elif task == "induction":
            hit = np.flatnonzero(row[:t] == row[t])
        elif task in ("text", "words", "reptext"):
            hit = 1 + np.flatnonzero((row[:t - 1] == row[t - 1]) & (row[1:t] == row[t])) if t >= 1 else []
            if len(hit) != 1:                                      # several earlier copies: no one target
                hit = []
        elif task == "reverse":
            hit = np.flatnonzero(row[:t] == row[t] - PARTNER)
        else:                                                      # recall: the key after a value
            key = row[t] - RECALL_ASK + RECALL_KEY
            hit = [p for p in np.flatnonzero(row[:t] == key) if p >= 1 and row[p - 1] < RECALL_KEY]
        if len(hit):
            out[b, t] = hit[-1]
    return {"entry" if task in _ENTRIES else "anchor": out}


def measure(model, task: str, tokens, mask) -> dict:
    """Every number the label rests on, for ``model`` on ``tokens [n_batches, batch, seq]`` and ``mask
    [n_batches, batch, seq-1]`` of ``task`` (module docstring). Arrays are ``[n_layers, n_heads, ...]``."""
    tokens, mask = np.asarray(tokens), np.asarray(mask, dtype=bool)
    if tokens.ndim != 3 or mask.shape != tokens.shape[:2] + (tokens.shape[2] - 1,):
        raise ValueError(f"tokens must be [n_batches, batch, seq] and mask [n_batches, batch, seq-1]; got tokens "
                         f"{list(tokens.shape)}, mask {list(mask.shape)}")
    if not mask.any():
        raise ValueError("mask must mark at least one position; got none")
    L, H = model.config["n_layers"], model.config["n_heads"]
    flat, fmask = tokens.reshape(-1, tokens.shape[-1]), mask.reshape(-1, mask.shape[-1])
    S = flat.shape[1]
    pat = model.attention_patterns(flat)                               # [N, L, H, S, S]
    loss = float(model.loss_per_token(flat)[fmask].mean())
    named = named_positions(task, flat, fmask)
    # the writer's pattern, attention d positions back, where the designed reader reads the writer's
    # output: at the question itself for Q-composition (lookup), else at the position the reader
    # attends to (the anchor + _TARGET), each such position once; in natural text (TEXT_TASKS) at every
    # position, since the anchors there are selected (named only where a pair occurred once before)
    if task in _ENTRIES:
        rows, cols = np.nonzero(fmask)
    else:
        at = np.zeros(flat.shape, dtype=bool)
        b, t = np.nonzero(named["anchor"] >= 0)
        at[b, named["anchor"][b, t] + _TARGET[task]] = True
        rows, cols = np.nonzero(at)
    back = _back(pat, rows, cols)
    out = {"loss": loss, "back": back}
    if task in TEXT_TASKS:
        out["back_at_target"] = back
        out["back_at_keys"] = _back(pat, *np.nonzero(_pair_keys(flat, fmask)))
        out["back"] = _back(pat, *np.nonzero(np.ones(flat.shape, dtype=bool)))
    if task in _ENTRIES:
        b, t = np.nonzero(named["entry"] >= 0)
        n = _ENTRIES[task]
        out["target"] = pat[b, :, :, t, named["entry"][b, t]].mean(0)
        # how selective a head is among the n entries: the right one's share of its attention to
        # all of them (chance 1/n), whatever that attention's total
        out["entries"] = pat[b, :, :, t, :n].sum(-1).mean(0)
        out["entry_share"] = (pat[b, :, :, t, named["entry"][b, t]] / pat[b, :, :, t, :n].sum(-1)).mean(0)
    else:
        anchor = named["anchor"]
        b, t = np.nonzero(anchor >= 0)
        around = np.zeros((L, H, 2 * AROUND + 1))
        for i, k in enumerate(range(-AROUND, AROUND + 1)):
            pos = anchor[b, t] + k
            ok = (pos >= 0) & (pos <= t)                             # inside the causal window
            share = np.zeros((len(b), L, H))
            share[ok] = pat[b[ok], :, :, t[ok], pos[ok]]
            around[..., i] = share.mean(0)
        out["around"] = around
        out["target"] = around[..., AROUND + _TARGET[task]]
        if task in _ANSWER:
            out["answer"] = around[..., AROUND + _ANSWER[task]]
    out["path_batches"] = np.stack([ground_truth(path_effects(model, toks, "QKV"), m)
                                    for toks, m in zip(tokens, mask) if m.any()])
    out["path"] = out["path_batches"].mean(0)
    return out


def _pair_keys(tokens, mask) -> np.ndarray:
    """``[batch, seq]`` bool: the positions after *every* earlier occurrence of the current pair, at each
    masked position of a text task: all the keys an induction head may read, unselected."""
    keys = np.zeros(tokens.shape, dtype=bool)
    for b, t in zip(*np.nonzero(mask)):
        row = tokens[b]
        if t >= 1:
            keys[b, 2 + np.flatnonzero((row[:t - 1] == row[t - 1]) & (row[1:t] == row[t]))] = True
    return keys


def _back(pat, rows, cols) -> np.ndarray:
    """``[L, H, BACK]``: mean attention from ``(rows, cols)`` (sequence, position) to ``d = 1 .. BACK`` back."""
    back = np.zeros(pat.shape[1:3] + (BACK,))
    for d in range(1, BACK + 1):
        ok = cols >= d
        back[..., d - 1] = pat[rows[ok], :, :, cols[ok], cols[ok] - d].mean(0) if ok.any() else 0.0
    return back


def _head(l, h):
    return f"L{l}H{h}"


def _best_path(path, mode, writers, readers):
    """(effect, writer, reader) of the largest path in ``mode`` (one of its letters, the largest)
    from a head in ``writers`` to a later head in ``readers`` (lists of (l, h))."""
    best = (0.0, None, None, None)
    for m in mode:
        for w in writers:
            for r in readers:
                if r[0] > w[0]:
                    e = float(path[MODES.index(m), w[0], w[1], r[0], r[1]])
                    if best[1] is None or e > best[0]:
                        best = (e, w, r, m)
    return best


def _heads(stat, min_layer=0, max_layer=None):
    """Heads whose ``stat [L, H]`` reaches ATTENTION, or the single largest if none does."""
    stat = np.asarray(stat)
    L = stat.shape[0]
    layers = range(min_layer, L if max_layer is None else max_layer)
    ok = [(l, h) for l in layers for h in range(stat.shape[1]) if stat[l, h] >= ATTENTION]
    if ok or not len(layers):
        return ok, True
    sub = stat[min_layer:(L if max_layer is None else max_layer)]
    l, h = np.unravel_index(int(np.argmax(sub)), sub.shape)
    return [(int(l) + min_layer, int(h))], False


def label(task: str, m: dict) -> dict:
    """The mechanism ``measure``'s numbers ``m`` show, with the pair and numbers it rests on:
    ``{"label", "writer", "reader", "mode", "effect", "writer_attention", "reader_attention", "evidence"}``."""
    if task not in _TASK_LABELS:
        raise ValueError(f"task must be one of {sorted(_TASK_LABELS)}; got {task!r}")
    back, path = m["back"], m["path"]
    L = back.shape[0]
    prev = back[..., 0]
    window, window_d = back[..., 1:].max(-1), back[..., 1:].argmax(-1) + 2
    candidates = []                                       # (label, writer stat, reader stat, mode, names)
    first, second = _TASK_LABELS[task]
    if task in ("induction", "text", "words", "reptext"):
        around = m["around"]
        shifted, shifted_k = around[..., AROUND + 2:].max(-1), around[..., AROUND + 2:].argmax(-1) + 2
        candidates.append((first, prev, m["target"], "K", ("previous token", "anchor + 1")))
        candidates.append((second, window, shifted, "KV", ("d back", "anchor + k")))
    elif task in ("reverse", "recall"):
        candidates.append((first, prev, m["target"], "V", ("previous token", "anchor")))
        candidates.append((second, None, m["answer"], "QK", (None, "anchor - 1 (the answer)")))
    else:
        candidates.append((first, prev, m["target"], "Q", ("previous token", "right entry")))
        candidates.append((second, None, None, "QKV", (None, None)))
    report = None
    for name, wstat, rstat, mode, (wwhat, rwhat) in candidates:
        if rstat is None:
            readers, r_ok = [(l, h) for l in range(1, L) for h in range(back.shape[1])], True
        else:
            readers, r_ok = _heads(rstat, min_layer=1)
        if wstat is None:
            writers, w_ok = [(l, h) for l in range(L - 1) for h in range(back.shape[1])], True
        else:
            writers, w_ok = _heads(wstat, max_layer=L - 1)
        effect, w, r, used = _best_path(path, mode, writers, readers)
        formed = w_ok and r_ok and w is not None and effect >= PATH
        if rstat is None and formed and task in _ENTRIES and _heads(m["target"], min_layer=1)[1]:
            formed = False                                # a head does attend to the entry: not diffuse
        if w is None:
            desc = f"{L} layer(s): no later head to compose with"
        else:
            parts = []
            if wstat is not None:
                extra = f" (d = {int(window_d[w])})" if wwhat == "d back" else ""
                parts.append(f"{_head(*w)} attends to {wwhat}{extra} {float(wstat[w]):.2f}")
            if rstat is not None:
                extra = f" (k = {int(shifted_k[r])})" if rwhat == "anchor + k" else ""
                parts.append(f"{_head(*r)} to {rwhat}{extra} {float(rstat[r]):.2f}")
            parts.append(f"{used} path {_head(*w)} -> {_head(*r)} {effect:.3f} nats")
            desc = "; ".join(parts)
        entry = {"label": name if formed else "none formed", "writer": None if w is None else _head(*w),
                 "reader": None if r is None else _head(*r), "mode": used, "effect": round(effect, 4),
                 "writer_attention": None if (wstat is None or w is None) else round(float(wstat[w]), 4),
                 "reader_attention": None if (rstat is None or r is None) else round(float(rstat[r]), 4),
                 "evidence": desc}
        if formed:
            return entry
        if report is None:
            report = entry                                # the designed mechanism's numbers, not formed
    return report


def _round(a):
    return np.round(np.asarray(a, dtype=float), 4).tolist()


def _parse_head(name: str) -> tuple[int, int]:
    """``"L1H2"`` as ``(1, 2)``."""
    layer, head = name[1:].split("H")
    return int(layer), int(head)


def _effect_interval(path_batches, entry: dict) -> list | None:
    """``[lo, hi]``: the 95% bootstrap interval over the batches of the labelled (or designed) path's effect,
    ``entry``'s writer, reader and mode; None where there is no such pair or a single batch.

    Why: the label compares the batches' mean with ``PATH``; how far that mean could move on another
    draw of as many batches says whether the label could flip.
    """
    if entry["writer"] is None or entry["reader"] is None or len(path_batches) < 2:
        return None
    from headspace import stats
    w, r = _parse_head(entry["writer"]), _parse_head(entry["reader"])
    per = np.asarray(path_batches)[:, MODES.index(entry["mode"]), w[0], w[1], r[0], r[1]]
    iv = stats.interval(per)
    return [round(iv.lo, 4), round(iv.hi, 4)]


def mechanism(model, task: str, tokens, mask, batches: int = N_BATCHES) -> dict:
    """``measure`` and ``label`` on the first ``batches`` batches, as the JSON record the zoo stores (a record
    states its ``batches``: one made before ``N_BATCHES`` was 20 is checked on the 4 it was made on)."""
    if isinstance(batches, bool) or not isinstance(batches, (int, np.integer)) or batches < 1:
        raise ValueError(f"batches must be an integer >= 1; got {batches!r}")
    tokens, mask = np.asarray(tokens)[:batches], np.asarray(mask)[:batches]
    m = measure(model, task, tokens, mask)
    out = {"task": task, "designed": _TASK_LABELS[task][0] if task in _TASK_LABELS else None,
           **label(task, m), "thresholds": THRESHOLDS, "batches": int(len(tokens))}
    out["effect_interval"] = _effect_interval(m["path_batches"], out)
    out.update({"circuit_loss": round(m["loss"], 4),
                "previous": _round(m["back"][..., 0]), "back": _round(m["back"]), "target": _round(m["target"])})
    for where in ("target", "keys"):
        if f"back_at_{where}" not in m:
            continue
        # the writer where the reader reads it: at the selected anchors' targets ("target", restricted as
        # the reader's measure is), and after every earlier occurrence of the pair ("keys")
        out[f"previous_at_{where}"] = _round(m[f"back_at_{where}"][..., 0])
        if out["writer"] is not None and out["writer_attention"] is not None:
            at = m[f"back_at_{where}"][_parse_head(out["writer"])]
            previous = "attends to previous token" in out["evidence"]     # else the d >= 2 window
            out[f"writer_attention_at_{where}"] = round(float(at[0] if previous else at[1:].max()), 4)
    for key in ("answer", "entries", "entry_share"):
        if key in m:
            out[key] = _round(m[key])
    if "around" in m:
        out["around"] = _round(m["around"])
    largest = {}
    for i, mode in enumerate(MODES):
        p = m["path"][i]
        idx = np.unravel_index(int(np.argmax(p)), p.shape)
        largest[mode] = {"writer": _head(*idx[:2]), "reader": _head(*idx[2:]), "effect": round(float(p[idx]), 4)}
    out["largest_path"] = largest
    return out


def record(zoo, names=None, progress=None, batches: int = N_BATCHES) -> dict[str, str]:
    """Measure every model of ``zoo`` (or ``names``) on ``batches`` evaluation batches, write
    ``<model>/mechanism.json`` and list it, with its sha256, in the zoo's manifest, where the model's entry
    also gets ``"mechanism": <label>``."""
    from headspace import benchmark
    zoo = Path(zoo)
    manifest = store.read_manifest(zoo)
    labels = {}
    for name, entry in manifest["models"].items():
        if names is not None and name not in names:
            continue
        tokens, mask = benchmark.eval_batches(zoo, entry["task"])
        rec = mechanism(benchmark.load_zoo_model(zoo, name), entry["task"], tokens, mask, batches)
        data = (json.dumps(rec, indent=1) + "\n").encode()
        (zoo / name / MECHANISM_FILE).write_bytes(data)
        entry["files"][MECHANISM_FILE] = {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
        entry["files"] = dict(sorted(entry["files"].items()))
        entry["mechanism"] = rec["label"]
        labels[name] = rec["label"]
        if progress:
            progress(f"{name}: {rec['label']} ({rec['evidence']}; circuit loss {rec['circuit_loss']:.3f})")
    (zoo / store.MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    return labels


def read(zoo, name: str) -> dict:
    """A model's recorded ``mechanism.json``, checked against the zoo's manifest."""
    return store.read_json(zoo, name, MECHANISM_FILE)


def main(argv=None) -> int:
    """``python -m headspace.mechanisms --zoo DIR [--write] [--only PREFIX]``: print (and record) each
    model's mechanism."""
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--zoo", required=True, type=Path)
    ap.add_argument("--write", action="store_true", help="write mechanism.json files and the manifest")
    ap.add_argument("--only", help="models whose name starts with this")
    args = ap.parse_args(argv)
    from headspace import benchmark
    models = benchmark.zoo_models(args.zoo)
    names = [n for n in models if not args.only or n.startswith(args.only)]
    if args.write:
        record(args.zoo, names, progress=print)
        return 0
    for name in names:
        tokens, mask = benchmark.eval_batches(args.zoo, models[name]["task"])
        rec = mechanism(benchmark.load_zoo_model(args.zoo, name), models[name]["task"], tokens, mask)
        print(f"{name}: {rec['label']} ({rec['evidence']}; circuit loss {rec['circuit_loss']:.3f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
