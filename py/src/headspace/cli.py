"""The command line: score the heads of a model without writing Python.

    python -m headspace scores MODEL [--mode Q,K,V] [--metric frobenius,whitened,...] [--out scores.csv] [--top N]
    python -m headspace heads MODEL [--batch N] [--seed S]
    python -m headspace bench [--ground-truth G] [--group G] [--mode M] [--csv FILE] [--held-out [--splits N]]
                              [--score module:function ...] [--zoo DIR] [--resamples N] [--agreement]

``MODEL`` is the name of a shipped model (``attn-only-2l``), a model directory
(``config.json`` + ``weights.npz``, as ``headspace.store`` writes them), an
``.npz`` of TransformerLens state-dict keys with its config JSON (``--config``,
else ``<stem>.json`` or ``config.json`` beside it), or a safetensors checkpoint
as models are shared: a Hugging Face folder (``config.json`` + ``model.safetensors``
or its shards' ``model.safetensors.index.json``) or a ``.safetensors`` file (its
config from ``--config`` or ``config.json`` beside it), GPT-2, GPT-NeoX/Pythia,
Llama/Mistral/Qwen2 or TransformerLens keys (``headspace.checkpoint``). Scores are
computed on the weights with norm scales folded in, as ``headspace.weights`` explains.

``--metric`` also takes the two size baselines of ``headspace.pair_scores``, ``product_norm`` and
``norm_product`` (computed a layer pair at a time by ``headspace.layer_pairs``).
``scores`` prints the highest-scoring (earlier head, later head) pairs as a
table and, with ``--out``, writes every pair to CSV: one row per pair, the
columns ``mode, layer1, head1, layer2, head2`` and one per metric. ``heads``
runs the model (attention-only models in ``headspace.model``'s forward pass) on
seeded repeated random sequences and prints each head's previous-token and
induction score.

``bench`` prints the composition-score benchmark (``headspace.benchmark``): for each score, the
mean over the zoo's models of its Spearman correlation with a causal ground truth and its AUROC
at finding the causal pairs, each with a 95% interval over seeds and evaluation batches. Without
``--score`` it reads the table shipped with the package; ``--score module:function`` (repeatable)
scores your own function on the zoo (``--zoo DIR`` or ``$HEADSPACE_ZOO``: the ``zoo/`` directory of
a checkout, with its precomputed ground truths) and recomputes the table with it beside the
built-in scores. The function takes ``(weights, mode)``, a ``headspace.weights.Weights`` (norm
scales folded in, TransformerLens layout) and ``"Q"``, ``"K"`` or ``"V"``, and returns
``[n_layers, n_heads, n_layers, n_heads]``. ``--csv`` writes every row of the table. The last
column counts the other scores each one is *separated from* (the paired bootstrap interval of the
difference of their Spearman excludes 0), and the last line names those the first is not. Scores
that rank every pair alike by construction (``headspace.benchmark.TWINS``: ``frobenius_baseline``
and ``frobenius``, ``projection_kernel`` and ``subspace``, and for Q and K ``token`` and
``whitened``) can never be separated, so they count once.
After the table (group ``all``), ``bench`` prints the scorecard (``headspace.scorecard``): per score,
over the models whose circuit formed, Spearman, partial Spearman controlling for ``norm_product``
and for ``product_norm``, AUROC, top-1 hit rate and precision within the top k, each with a 95%
interval over configurations, seeds and batches; the models without a circuit apart; and the
comparisons that hold after Holm's correction; in the task's mode (the default) it then prints the
shipped card with each model in the mode its recorded mechanism names (``--mode mechanism`` alone
prints that, and recomputes it with ``--score``). From the shipped report it also prints the card with
the circuit decided by the path alone (``scorecard(circuit_by="path")``, its own Holm family), and the
Frobenius score's gap from path size in each mode with its change between modes, paired over one bootstrap
(``scorecard.mode_gaps``); both go in the CSV. ``--mode largest`` reads each model in the mode of its largest path; ``--ground-truth excess-circuit`` uses the controlled ground truth
(``headspace.controlled``). ``--held-out`` prints the scorecard of each half of the configurations
and the rule (best by ``--held-out-statistic``) chosen on one half and tested on the other; with
``--splits N`` also the rule over every distinct split seeds 0..N-1 deal (``headspace.splits``).
``--csv FILE`` also writes ``FILE`` with the suffix ``.scorecard.csv``.
``--agreement`` prints, before any score, how well the four ground truths agree with each other
on each model of ``--group``: Spearman over the model's pairs, with its interval over batches.

>>> main(["scores", "attn-only-2l", "--mode", "K", "--top", "2"])   # doctest: +NORMALIZE_WHITESPACE
attn-only-2l: K-composition, 2 of 16 pairs, by frobenius
mode  writer  reader  frobenius
K     L0H1    L1H2    0.2069
K     L0H1    L1H1    0.2055
0
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path

import numpy as np

from headspace import heads as _heads
from headspace import checkpoint, store, weights
from headspace.composition import METRICS, MODES
from headspace.head_pairs import later_mask
from headspace.layer_pairs import size_scores
from headspace.model import Model

__all__ = ["main"]

#: The two size baselines (``headspace.pair_scores``), which ``scores`` computes beside the metrics.
SIZE_SCORES = ("product_norm", "norm_product")


def main(argv=None) -> int:
    """Run the command line with ``argv`` (default ``sys.argv[1:]``); returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        return args.run(args)
    except ValueError as exc:
        print(f"headspace {args.command}: {exc}", file=sys.stderr)
        return 2


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m headspace", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("scores", help="composition scores of every (earlier head, later head) pair")
    s.add_argument("model", help="a shipped model name, a model directory, an .npz of TransformerLens weights, "
                                  "or a safetensors checkpoint (a Hugging Face folder or a .safetensors file)")
    s.add_argument("--config", type=Path, help="the config JSON of an .npz model or a lone .safetensors file")
    s.add_argument("--step", type=int, help="a training checkpoint of a model directory (default: final weights)")
    s.add_argument("--mode", default="K", help="Q, K, V or a comma list of them (default: K)")
    s.add_argument("--metric", default="frobenius",
                   help=f"comma list of {', '.join(METRICS + SIZE_SCORES)} (default: frobenius); the first ranks "
                        f"the table")
    s.add_argument("--top", type=int, default=10, help="pairs to print (default: 10)")
    s.add_argument("--out", type=Path, help="write every pair to this CSV file")
    s.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="show a progress bar (default: when stderr is a terminal)")
    s.set_defaults(run=_scores)
    h = sub.add_parser("heads", help="previous-token and induction scores of every head")
    h.add_argument("model", help="a shipped model name, a model directory, or an .npz of TransformerLens weights")
    h.add_argument("--config", type=Path, help="the config JSON of an .npz model")
    h.add_argument("--step", type=int, help="a training checkpoint of a model directory (default: final weights)")
    h.add_argument("--batch", type=int, default=16, help="repeated random sequences to average over (default: 16)")
    h.add_argument("--seed", type=int, default=0, help="seed of the sequences (default: 0)")
    h.set_defaults(run=_heads_command)
    b = sub.add_parser("bench", help="the composition-score benchmark: every score against the causal ground "
                                     "truths on the zoo of trained models")
    b.add_argument("--ground-truth", default="mean-circuit",
                   help="mean-all, mean-circuit, resample-all, resample-circuit, or excess-circuit (the scorecard's "
                        "ground truth that leaves size out; default: mean-circuit)")
    b.add_argument("--group", default="all", help="all, a task (induction, reverse, recall, lookup, words, text) or "
                                                  "a family (default: all)")
    b.add_argument("--mode", default="task", help="Q, K, V, task: each model in its task's mode (default), "
                                                  "largest: in the mode of its largest path, or mechanism: in the "
                                                  "mode its recorded mechanism names (scorecard only)")
    b.add_argument("--score", action="append", default=[], metavar="MODULE:FUNCTION",
                   help="your own score, fn(weights, mode) -> [n_layers, n_heads, n_layers, n_heads]; repeatable")
    b.add_argument("--zoo", help="the zoo directory (for --score; default $HEADSPACE_ZOO)")
    b.add_argument("--resamples", type=int, default=None, help="bootstrap draws when recomputing (default 1000)")
    b.add_argument("--csv", type=Path, help="write every row of the table (all groups, modes, ground truths)")
    b.add_argument("--held-out", action="store_true",
                   help="print the scorecard of each half of the configurations and the rule chosen on one half, "
                        "tested on the other")
    b.add_argument("--splits", type=int, default=None, metavar="N",
                   help="with --held-out: the rule over every distinct split seeds 0..N-1 deal (reads the zoo; headspace.splits)")
    b.add_argument("--held-out-statistic", default="precision_at_k",
                   help="the statistic the held-out rule picks its score by (default precision_at_k)")
    b.add_argument("--agreement", action="store_true",
                   help="print how well the ground truths agree with each other on each model of --group instead")
    b.set_defaults(run=_bench)
    return p


# --------------------------------------------------------------------------- reading a model

def _read(model: str, config: Path | None, step: int | None) -> store.Stored:
    path = Path(model)
    if path.suffix == ".npz":
        if not path.is_file():
            raise ValueError(f"weights file {model} does not exist")
        if step is not None:
            raise ValueError(f"--step applies to a model directory's checkpoints; got an .npz file {model}")
        if config is None:
            config = next((c for c in (path.with_suffix(".json"), path.parent / store.CONFIG) if c.is_file()), None)
            if config is None:
                raise ValueError(f"no config for {model}: pass --config, or put {path.with_suffix('.json').name} "
                                 f"or {store.CONFIG} beside it")
        return store.read_state_npz(path, config)
    if config is not None:
        raise ValueError(f"--config is for an .npz model; {model} is a model name or directory")
    verify = not path.is_dir() or (path.parent / store.MANIFEST).is_file()
    return store.read_model(model, step, verify=verify)


def _is_checkpoint(path: Path) -> bool:
    """A safetensors checkpoint: a ``.safetensors`` file, a shard index, or a folder holding either."""
    if path.is_dir():
        return any((path / f).is_file() for f in ("model.safetensors", "model.safetensors.index.json"))
    return path.suffix == ".safetensors" or path.name.endswith(".safetensors.index.json")


def _weights(args, embeddings: bool):
    """``(name, Weights)`` of the model the command names: a safetensors checkpoint (``headspace.checkpoint``)
    or anything ``_read`` reads. A checkpoint's embeddings are read only if a metric needs them."""
    path = Path(args.model)
    if _is_checkpoint(path):
        if args.step is not None:
            raise ValueError(f"--step applies to a model directory's checkpoints; got a safetensors checkpoint {path}")
        ck = checkpoint.open_checkpoint(path, args.config)
        w = ck.weights(embeddings=embeddings)
        for note in ck.notes:
            print(f"note: {note}", file=sys.stderr)
        return (path if path.is_dir() else path.parent if path.name == "model.safetensors" else path).name, w
    stored = _read(args.model, args.config, args.step)
    return stored.name, weights.from_state_dict(stored.state, stored.config)


def _writable(name: str, path: Path | None) -> None:
    """An output file must be creatable: checked before the work, not after it."""
    if path is not None and not path.parent.is_dir():
        raise ValueError(f"--{name} must be a file in an existing directory; got {str(path)!r} "
                         f"(no directory {str(path.parent)!r})")


def _choices(name: str, text: str, allowed) -> list[str]:
    picked = [x.strip() for x in text.split(",") if x.strip()]
    bad = [x for x in picked if x not in allowed]
    if bad or not picked:
        raise ValueError(f"--{name} must be a comma list of {', '.join(allowed)}; got {text!r}")
    return list(dict.fromkeys(picked))


# --------------------------------------------------------------------------- scores

def _scores(args) -> int:
    modes = _choices("mode", args.mode, MODES)
    metrics = _choices("metric", args.metric, METRICS + SIZE_SCORES)
    if args.top < 0:
        raise ValueError(f"--top must be 0 or more; got {args.top}")
    _writable("out", args.out)
    name, w = _weights(args, embeddings=any(m in ("token", "whitened") for m in metrics))
    show = sys.stderr.isatty() if args.progress is None else args.progress
    scores = {}
    if any(m in SIZE_SCORES for m in metrics):       # both size baselines of every mode, a layer pair at a time
        sizes = [size_scores(w.W_Q, w.W_K, w.W_V, w.W_O, m) for m in modes]
    for metric in metrics:
        bar = _Bar(f"{metric} {','.join(modes)}") if show else None
        kw = {"progress": bar} if bar else {}
        if metric in SIZE_SCORES:                       # the size baselines, a layer pair at a time
            scores[metric] = np.stack([s[metric] for s in sizes])
        else:
            scores[metric] = np.asarray(w.composition_scores(tuple(modes), metric, **kw))   # stacked by mode
        if bar:
            bar.close()
    L, H = w.W_Q.shape[:2]
    pairs = [tuple(int(i) for i in p) for p in np.argwhere(later_mask((L, H, L, H)))]
    rows = [(m, *p, [float(scores[k][(i, *p)]) for k in metrics]) for i, m in enumerate(modes) for p in pairs]
    if args.out:
        with open(args.out, "w", newline="") as f:
            out = csv.writer(f)
            out.writerow(["mode", "layer1", "head1", "layer2", "head2", *metrics])
            for m, l1, h1, l2, h2, values in rows:
                out.writerow([m, l1, h1, l2, h2, *(repr(v) for v in values)])
    rows.sort(key=lambda r: -r[5][0])
    top = rows[:args.top]
    print(f"{name}: {'/'.join(modes)}-composition, {len(top)} of {len(rows)} pairs, by {metrics[0]}")
    _table(["mode", "writer", "reader", *metrics],
           [[m, f"L{l1}H{h1}", f"L{l2}H{h2}", *(f"{v:.4g}" for v in values)] for m, l1, h1, l2, h2, values in top])
    if args.out:
        print(f"wrote {len(rows)} pairs to {args.out}", file=sys.stderr)
    return 0


class _Bar:
    """A one-line progress bar on stderr, fed ``(done, total)`` by ``all_composition_scores``."""

    def __init__(self, label: str, width: int = 30):
        self.label, self.width, self.started = label, width, time.perf_counter()

    def __call__(self, done: int, total: int) -> None:
        filled = int(self.width * done / max(total, 1))
        elapsed = time.perf_counter() - self.started
        eta = f", {elapsed * (total - done) / done:.0f} s left" if 0 < done < total else ""
        print(f"\r{self.label} [{'#' * filled}{'.' * (self.width - filled)}] {done}/{total} "
              f"({elapsed:.0f} s{eta})", end="", file=sys.stderr, flush=True)

    def close(self) -> None:
        print(file=sys.stderr)


def _table(header: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows)]
    for row in [header, *rows]:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip())


# --------------------------------------------------------------------------- bench

def _researcher_score(spec: str):
    """``module:function`` imported: the benchmark calls it as it calls its own, ``fn(weights, mode)``."""
    import importlib
    module, _, name = spec.partition(":")
    if not module or not name:
        raise ValueError(f"--score must be module:function; got {spec!r}")
    try:
        fn = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"--score {spec!r} could not be imported: {exc}") from None
    if not callable(fn):
        raise ValueError(f"--score {spec!r} must name a function; got {type(fn).__name__}")
    return fn


def _bench(args) -> int:
    from headspace import benchmark
    from headspace.pair_scores import SCORES
    from headspace import scorecard
    if args.ground_truth not in (*benchmark.GT_NAMES, *scorecard.REPORT_GROUND_TRUTHS):
        raise ValueError(f"--ground-truth must be one of {', '.join(dict.fromkeys((*benchmark.GT_NAMES, *scorecard.REPORT_GROUND_TRUTHS)))}; "
                         f"got {args.ground_truth!r}")
    # every argument checked before anything prints: a bad one is not found after a page of output
    if args.mode not in scorecard.SCORECARD_MODES:
        raise ValueError(f"--mode must be one of {', '.join(scorecard.SCORECARD_MODES)}; got {args.mode!r}")
    if args.held_out_statistic not in scorecard.STATISTICS:
        raise ValueError(f"--held-out-statistic must be one of {', '.join(scorecard.STATISTICS)}; "
                         f"got {args.held_out_statistic!r}")
    if args.splits is not None and args.splits < 1:
        raise ValueError(f"--splits must be at least 1; got {args.splits}")
    if args.splits is not None and not args.held_out:
        raise ValueError(f"--splits applies to --held-out (the splits of the zoo it draws); got --splits {args.splits} without it")
    _writable("csv", args.csv)
    if args.ground_truth not in benchmark.GT_NAMES or args.mode in ("largest", "mechanism") or args.held_out:
        # statistics the benchmark table does not hold: the scorecard alone, which is over the whole zoo
        if args.agreement:
            raise ValueError("--agreement reads the benchmark table (--mode Q, K, V or task, a ground truth of "
                             f"{', '.join(benchmark.GT_NAMES)}, without --held-out); got --mode {args.mode}, "
                             f"--ground-truth {args.ground_truth}{', --held-out' if args.held_out else ''}")
        if args.group != "all":
            raise ValueError(f"--group must be all with --mode largest or mechanism, --held-out or --ground-truth "
                             f"excess-circuit (the scorecard covers the whole zoo); got {args.group!r}")
        return _scorecard_section(args)
    if args.score or args.resamples is not None:
        scores = dict(SCORES)
        for spec in args.score:
            scores[spec] = _researcher_score(spec)
        n = benchmark.RESAMPLES if args.resamples is None else args.resamples
        if n < 10:
            raise ValueError(f"--resamples must be at least 10; got {n}")
        started = time.perf_counter()
        table = benchmark.benchmark_table(args.zoo, scores, resamples=n)
        print(f"recomputed on {len(table['models'])} models in {time.perf_counter() - started:.1f} s",
              file=sys.stderr)
    else:
        table = benchmark.read_table()
    fields = table["row_fields"]
    rows = [dict(zip(fields, r)) for r in table["rows"]]
    for key, allowed in (("ground_truth", table["ground_truths"]), ("mode", table["table_modes"]),
                         ("group", ["all", *table["tasks"], *table["families"]])):
        if getattr(args, key) not in allowed:
            raise ValueError(f"--{key.replace('_', '-')} must be one of {', '.join(allowed)}; got {getattr(args, key)!r}")
    if args.agreement:
        return _agreement(table, args.group, args.mode)
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            out = csv.writer(f)
            out.writerow(fields)
            out.writerows(table["rows"])
        print(f"wrote {len(rows)} rows to {args.csv}", file=sys.stderr)
    pick = [r for r in rows if r["group"] == args.group and r["mode"] == args.mode
            and r["ground_truth"] == args.ground_truth]
    pick.sort(key=lambda r: -(r["spearman"] if r["spearman"] is not None else -9))
    f = lambda x: "  -  " if x is None else f"{x:.2f}"  # noqa: E731
    # which scores' Spearman the paired bootstrap separates (the difference's interval excludes 0),
    # twins (benchmark.TWINS: the same ranking by construction) counted once
    others = benchmark.n_classes(table, args.group, args.mode) - 1
    sep = {r["score"]: benchmark.separation(table, args.group, args.mode, args.ground_truth, r["score"]) for r in pick}
    print(f"{args.group} models ({pick[0]['n_models']}), {args.mode} mode, against {args.ground_truth}; "
          f"95% intervals over seeds and evaluation batches")
    _table(["score", "Spearman", "95% interval", "AUROC", "95% interval", f"separated from (of {others})"],
           [[r["score"], f(r["spearman"]), f"[{f(r['spearman_lo'])}, {f(r['spearman_hi'])}]", f(r["auroc"]),
             f"[{f(r['auroc_lo'])}, {f(r['auroc_hi'])}]", str(others - len(sep[r["score"]][1]))] for r in pick])
    first = pick[0]["score"]
    twins, ties = sep[first]
    print(f"separated from: how many of the other {others} scores' Spearman differs from this one's beyond the noise "
          f"(the paired interval of the difference excludes 0), counting twins once: scores that rank every pair "
          f"alike by construction ({_twin_words(table, args.group, args.mode)}).")
    print(f"Not separated from {first}: {', '.join('/'.join(c) for c in ties) or 'none'}"
          + (f" (and its twin {', '.join(twins)})" if twins else ""))
    if args.group != "all":
        return 0
    print()
    return _scorecard_section(args)


def _print_splits(args, stat: str, gt: str, mode: str) -> None:
    """The held-out rule over many splits (``headspace.splits.many_splits``), on the zoo's point estimates."""
    from headspace import controlled, scorecard, splits
    from headspace.pair_scores import SCORES
    if args.splits < 1:
        raise ValueError(f"--splits must be at least 1; got {args.splits}")
    scores = dict(SCORES)
    for spec in args.score:
        scores[spec] = _researcher_score(spec)
    extra = {gt: controlled.read_zoo(args.zoo)[gt]} if gt == controlled.CONTROLLED else {}
    s = splits.many_splits(scorecard.zoo_data(args.zoo, scores, extra), stat, gt, mode, args.splits)
    n = s["n_directions"]
    print(f"over {s['n_splits']} distinct splits (seeds 0..{args.splits - 1}), {n} choices on one half tested on the "
          f"other, point estimates of {_STAT_HEAD[stat]}:")
    print(f"  the chosen score is first on the other half in {s['first_on_other']} of {n}, in the top {s['top']} in "
          f"{s['top_on_other']}, last in {s['last_on_other']}; carries over both ways in {s['both_ways']} of {s['n_splits']} splits")
    print(f"  rank on the other half: {', '.join(f'{r}: {c}' for r, c in s['rank_counts'].items())}")
    print(f"  chosen: {', '.join(f'{k} {c}' for k, c in s['chosen_counts'].items())}")
    print(f"  worst rank on any half: {', '.join(f'{k} {r}' for k, r in sorted(s['worst_rank'].items(), key=lambda x: x[1]))}")


_STAT_HEAD = {"spearman": "Spearman", "partial_norm_product": "partial|norm_product",
              "partial_product_norm": "partial|product_norm", "auroc": "AUROC", "top1": "top-1 hit",
              "precision_at_k": "precision@k"}


def _scorecard_section(args) -> int:
    """The scorecard (headspace.scorecard): shipped, or recomputed on ``--zoo`` with ``--score``; with
    ``--held-out``, the held-out halves instead. ``--csv`` gets a ``.scorecard.csv`` beside it."""
    from headspace import scorecard
    from headspace.pair_scores import SCORES
    gt, mode = args.ground_truth, args.mode
    if mode not in scorecard.SCORECARD_MODES:
        raise ValueError(f"--mode must be one of {', '.join(scorecard.SCORECARD_MODES)}; got {mode!r}")
    stat = args.held_out_statistic
    if stat not in scorecard.STATISTICS:
        raise ValueError(f"--held-out-statistic must be one of {', '.join(scorecard.STATISTICS)}; got {stat!r}")
    if args.score or args.resamples is not None or mode in "QKV":
        scores = dict(SCORES)
        for spec in args.score:
            scores[spec] = _researcher_score(spec)
        n = scorecard.RESAMPLES if args.resamples is None else args.resamples
        from headspace import benchmark, controlled
        extra = {}
        if gt == controlled.CONTROLLED:
            extra[gt] = controlled.read_zoo(args.zoo)[gt]
        data = scorecard.zoo_data(args.zoo, scores, extra)
        if gt not in data.ground_truths:
            raise ValueError(f"--ground-truth must be one of {', '.join(data.ground_truths)}; got {gt!r}")
        cards = {"whole zoo": scorecard.scorecard(data, gt, mode, n)}
        held = scorecard.held_out(data, stat, gt, mode, n) if args.held_out else None
        gaps = None
    else:
        report = scorecard.read_report()
        key = f"{gt}|{mode}"
        if key not in report["scorecards"]:
            raise ValueError(f"--ground-truth and --mode must be among the shipped scorecard's "
                             f"{sorted(report['scorecards'])} without --zoo; got {key!r}")
        cards = {"whole zoo": report["scorecards"][key]}
        if mode == "task" and not args.held_out and f"{gt}|mechanism" in report["scorecards"]:
            cards["whole zoo, by mechanism"] = report["scorecards"][f"{gt}|mechanism"]
        # the sensitivity with the circuit decided by the path alone, beside the main card (its own Holm)
        if not args.held_out and key in report.get("circuit_by_path", {}):
            cards["whole zoo, circuit by path alone (own Holm)"] = report["circuit_by_path"][key]
        gaps = report.get("mode_gaps", {}).get(gt) if not args.held_out else None
        held = report["held_out"].get(f"{key}|{stat}") if args.held_out else None
        if args.held_out and held is None:
            raise ValueError(f"the shipped scorecard has no held-out split for {key}|{stat}")
    if held is not None:
        cards = {f"half {h} ({', '.join(held['halves'][h])})": c for h, c in held["scorecards"].items()}
    for title, card in cards.items():
        _print_card(title, card, gt, card.get("mode", mode))
    if gaps is not None:
        _print_mode_gaps(gaps)
    if held is not None:
        for v in held["verdict"]:
            est, lo, hi = v["on_chosen_half"]
            e2, l2, h2 = v["on_held_out_half"]
            print(f"rule: the best {_STAT_HEAD[stat]} on half {v['chosen_on']} is {v['chosen']} "
                  f"({_f(est)} [{_f(lo)}, {_f(hi)}]); on held-out half {v['tested_on']}: {_f(e2)} [{_f(l2)}, {_f(h2)}], "
                  f"rank {v['rank_on_held_out_half']} (best there: {v['best_on_held_out_half']})")
    if args.held_out and args.splits is not None:
        _print_splits(args, stat, gt, mode)
    if args.csv:
        path = args.csv.with_suffix(".scorecard.csv")
        with open(path, "w", newline="") as f:
            out = csv.writer(f)
            out.writerow(["part", "ground_truth", "mode", "models", "statistic", "score", "estimate", "lo", "hi"])
            for title, card in cards.items():
                for part, key in (("formed", "stats"), ("circuitless", "circuitless")):
                    for st, by in card.get(key, {}).items():
                        for sc, (e, lo, hi) in by.items():
                            out.writerow([title, gt, card.get("mode", mode), part, st, sc, e, lo, hi])
            if gaps is not None:          # the gap in each mode and its paired change, one bootstrap
                g = gaps["gap"]
                pair = f"{g['score']} - {g['against']}"
                for m, (e, lo, hi) in gaps["gaps"].items():
                    out.writerow(["mode gap", gt, m, "formed", g["statistic"], pair, e, lo, hi])
                for ms, (e, lo, hi, _) in gaps["differences"].items():
                    out.writerow(["mode gap difference (paired)", gt, ms, "formed", g["statistic"], pair, e, lo, hi])
        print(f"wrote the scorecard to {path}", file=sys.stderr)
    return 0


def _f(x) -> str:
    return "  -  " if x is None else f"{x:.2f}"


def _print_card(title: str, card: dict, gt: str, mode: str) -> None:
    stats_ = card["stats"]
    order = sorted(stats_["spearman"], key=lambda s: -(stats_["spearman"][s][0] if stats_["spearman"][s][0] is not None else -9))
    read_as = {"task": "each in its task's mode", "largest": "each in the mode of its largest path",
               "mechanism": "each in the mode its recorded mechanism names"}.get(mode, f"{mode} mode")
    boot = card.get("bootstrap")
    widen = f"widened for {boot['n']} {boot['unit']}" if boot and boot.get("n") else "widened for few configurations"
    print(f"scorecard, {title}: {len(card['models'])} models whose circuit formed, {read_as}, against {gt}; "
          f"95% intervals over configurations, seeds and batches ({widen})")
    _table(["score", *(_STAT_HEAD[s] for s in stats_)],
           [[s, *(f"{_f(stats_[st][s][0])} [{_f(stats_[st][s][1])}, {_f(stats_[st][s][2])}]" for st in stats_)]
            for s in order])
    if card.get("circuitless_models"):
        sp = card["circuitless"]["spearman"]
        print(f"apart, {len(card['circuitless_models'])} models without a circuit ({', '.join(card['circuitless_models'])}): "
              f"Spearman " + ", ".join(f"{s} {_f(sp[s][0])}" for s in order[:4]))
    comps = card.get("comparisons", [])
    held = [c for c in comps if c[7] is not None and c[7] < 0.05]
    family = card.get("holm_family")
    over = (f", adjusted over the {family['n_comparisons']} of all {len(family['cards'])} scorecards of the report"
            if family else "")
    print(f"Holm: {len(comps)} comparisons (each score against norm_product and product_norm on Spearman, AUROC, "
          f"top-1 and precision@k, and each partial Spearman against 0){over}; {len(held)} hold at 5% after correction"
          + (":" if held else "."))
    for c in held:
        print(f"  {c[0]} - {c[1]} on {_STAT_HEAD[c[2]]}: {c[3]:+.2f} [{_f(c[4])}, {_f(c[5])}], Holm p {c[7]:.3g}")


def _print_mode_gaps(gaps: dict) -> None:
    """The gap (``scorecard.mode_gaps``) in each mode and how it changes between modes, paired over one bootstrap."""
    g = gaps["gap"]
    boot = gaps["bootstrap"]
    print(f"mode gap, {g['score']} - {g['against']} on {_STAT_HEAD[g['statistic']]}, one bootstrap for every mode "
          f"(widened for {boot['n']} {boot['unit']}):")
    print("  " + "; ".join(f"{m} {_f(e)} [{_f(lo)}, {_f(hi)}]" for m, (e, lo, hi) in gaps["gaps"].items()))
    print("  paired change: " + "; ".join(f"{k} {e:+.3f} [{lo:+.3f}, {hi:+.3f}], p " + ("-" if p is None else f"{p:.3g}")
                                          for k, (e, lo, hi, p) in gaps["differences"].items()))


def _twin_words(table: dict, group: str, mode: str) -> str:
    from headspace import benchmark
    classes = [c for c in benchmark.twin_classes(table["scores"], benchmark.modes_read(table, group, mode)) if len(c) > 1]
    return "; ".join(" = ".join(c) for c in classes) or "none here"


def _agreement(table: dict, group: str, mode: str) -> int:
    """Per model of ``group``: Spearman between each two ground truths over its pairs, in ``mode``
    (``task``: the model's own task's mode), with its 95% interval over evaluation batches."""
    gts = table["ground_truths"]
    pairs = [(a, b) for i, a in enumerate(gts) for b in gts[i + 1:]]
    print(f"ground truths against each other, {group} models, {mode} mode: Spearman over each model's pairs of "
          f"heads [95% interval over evaluation batches]")
    rows = []
    for m, agree in zip(table["models"], table["agreement"]):
        if group not in ("all", m["task"], m["family"]):
            continue
        mm = table["mode_of_task"][m["task"]] if mode == "task" else mode
        cells = []
        for a, b in pairs:
            rho, lo, hi = agree[f"{mm}:{a}|{b}"]
            cells.append("-" if rho is None or rho != rho else f"{rho:.2f} [{lo:.2f}, {hi:.2f}]")
        rows.append([m["name"], mm, *cells])
    _table(["model", "mode", *(f"{a} ~ {b}" for a, b in pairs)], rows)
    return 0


# --------------------------------------------------------------------------- heads

def _heads_command(args) -> int:
    if args.batch < 1:
        raise ValueError(f"--batch must be at least 1; got {args.batch}")
    if args.seed < 0:
        raise ValueError(f"--seed must be 0 or more; got {args.seed}")
    if _is_checkpoint(Path(args.model)):
        raise ValueError(f"model must be a shipped model name, a model directory or an .npz for heads (it runs "
                         f"headspace.model's forward pass); got a safetensors checkpoint {args.model!r} "
                         f"(scores reads those)")
    stored = _read(args.model, args.config, args.step)
    try:
        model = Model.from_stored(stored)
    except ValueError as exc:
        raise ValueError(f"heads runs the model with headspace.model's forward pass, which {exc}") from None
    c = model.config
    tokens = _heads.repeated_tokens(c["d_vocab"], c["n_ctx"], batch=args.batch, seed=args.seed)
    prev, ind = _heads.head_scores(model, tokens)
    print(f"{stored.name}: {args.batch} sequences of {tokens.shape[1] // 2} random tokens repeated once (seed {args.seed})")
    order = sorted(((l, h) for l in range(prev.shape[0]) for h in range(prev.shape[1])),
                   key=lambda lh: -max(prev[lh], ind[lh]))
    _table(["head", "previous-token", "induction", "looks like"],
           [[f"L{l}H{h}", f"{prev[l, h]:.3f}", f"{ind[l, h]:.3f}", _kind(prev[l, h], ind[l, h])] for l, h in order])
    return 0


def _kind(prev: float, ind: float, threshold: float = 0.4) -> str:
    """A label for the table: which pattern the head's attention follows, if either is strong."""
    if max(prev, ind) < threshold:
        return ""
    return "induction" if ind >= prev else "previous-token"


if __name__ == "__main__":   # pragma: no cover
    sys.exit(main())
