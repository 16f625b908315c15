"""The page "Score your model": a reader's checkpoint, read and scored in the worker, a block per request.

The page posts the reader's files to the worker, which hands each to Python as a *source*
(``name``, ``size``, ``read(offset, length)``: ``FileReaderSync`` on ``File.slice``), so a file is
never held whole. ``answer(op, args_json, files)`` is the one entry point, as ``runtime.answer``
is for the demos, and gives ``("result", json)`` or ``("error", json)`` (kind ``checkpoint`` for a
file that cannot be read, with the reason, else ``python``). The ops:

* ``open`` (``files``: the sources; args ``limitBytes``, the memory this tab may use): reads the
  headers and ``config.json`` (``headspace.checkpoint``), refuses a model that would not fit
  before reading any weight, and answers what was found and the plan: ``n_layers`` read steps,
  then one step per (earlier layer, later layer).
* ``step`` (args ``step``): reads one layer (folded, float32) and keeps its heads' thin SVDs
  (``headspace.layer_pairs.layer_bases``, the same size as the weights, which are then dropped), or
  scores one layer pair in every mode from one product of those bases (``layer_pairs.bases_scores``:
  ``frobenius``, ``svd_bound``, ``subspace`` and the two size baselines); answers the work done. The
  page sends the next step when this one is answered, and stops sending to cancel.
* ``view`` (args ``mode``, ``score``, ``width``, ``pair``): the writer x reader heatmap of one
  mode's scores as SVG (the site's figure engine), every pair's values in that mode (for the values
  under a pointer), the top pairs, and one pair's detail figure.
* ``csv``: every pair, every score, with the random baselines, as the command line writes them.

``token`` and ``whitened`` are not computed here: they read the embedding (d_vocab x d_model: 154 MB
of GPT-2 small's file, more than all its attention weights) and a d_model x d_model Gram matrix of
it, which in this tab would take longer than every other score together. The page says so and
gives the command line that computes them from the same files.
* ``close``: forget the checkpoint.

Scores are read against random heads of the same shapes (``layer_pairs.random_baselines``):
``frobenius``, ``svd_bound`` and ``subspace`` against their random means, ``product_norm`` against
the random ratio times the pair's ``norm_product``; ``norm_product`` reads no alignment, so random
heads of its sizes score the same.

>>> from headspace.checkpoint import example_config, example_state
>>> from headspace.safetensors_file import BytesSource, to_bytes
>>> config = example_config("gpt2", n_layers=2, n_heads=2, d_model=8)
>>> files = [Source("model.safetensors", to_bytes(example_state(config))),
...          Source("config.json", json.dumps(config).encode())]
>>> status, out = answer("open", '{"limitBytes": 100000000}', files)
>>> status, json.loads(out)["summary"]["architecture"], json.loads(out)["steps"]
('result', 'gpt2', 3)
>>> [json.loads(answer("step", json.dumps({"step": s}))[1])["finished"] for s in range(3)]
[False, False, True]
>>> answer("csv", "{}")[1].count("\\\\n")                  # a header and 3 modes x 2 x 2 pairs
13
"""

from __future__ import annotations

import json
import traceback

import numpy as np

from headspace import checkpoint as ckp
from headspace.layer_pairs import SCORES, bases_scores, layer_bases, random_baselines
from headspace.safetensors_file import BytesSource, SafetensorsFile

from headspace_site import protocol
from headspace_site.figure.names import words
from headspace_site.figure.style import COLORS, SCORE_SCALE

__all__ = ["answer", "Source"]

MODES = ("Q", "K", "V")
#: Scores with a random baseline, and the column that holds it in the CSV.
BASELINE = {"frobenius": "frobenius_random", "svd_bound": "svd_bound_random", "subspace": "subspace_random",
            "product_norm": "product_norm_random"}
#: The CSV's columns after the pair: each score, then its random baseline if it has one.
COLUMNS = [c for s in SCORES for c in (s, BASELINE.get(s)) if c]
#: One colour per mode in the pair figure.
MODE_COLORS = {"Q": COLORS["blue"], "K": COLORS["orange"], "V": COLORS["green"]}
_session = None


class Source(BytesSource):
    """A file given as bytes (tests and the docstring): the interface the worker's files have."""

    def __init__(self, name: str, data: bytes):
        super().__init__(data)
        self.name = name


def answer(op: str, args_json: str, files=None) -> tuple[str, str]:
    """Run ``op``; ``("result", json)`` or ``("error", json)`` of protocol.json's kinds."""
    global _session
    try:
        args = json.loads(args_json or "{}")
        if op == "open":
            # headers and checks first: a file refused leaves the last model (and the page's figures) as they were
            opened = _Session(files or [], int(args.get("limitBytes") or 2**31))
            _session = None                     # the last model's memory is free before the next one's is taken
            opened.allocate()
            _session = opened
            out = opened.opened()
        elif op == "close":
            _session = None
            out = {}
        elif _session is None:
            raise ValueError("no checkpoint is open: choose one first")
        elif op == "step":
            out = _session.step(int(args["step"]))
        elif op == "view":
            out = _session.view(args.get("mode", "K"), args.get("score", "frobenius"), int(args.get("width", 640)),
                                args.get("pair"), heatmap=bool(args.get("heatmap", True)))
        elif op == "csv":
            out = {"csv": _session.csv()}
        else:
            raise ValueError(f"op must be open, step, view, csv or close; got {op!r}")
        return "result", json.dumps(out, separators=(",", ":"))
    except ValueError as exc:
        error = protocol.error("checkpoint", message=str(exc))
    except MemoryError:
        _session = None
        error = protocol.error("checkpoint", message="this tab ran out of memory reading the model; the page keeps "
                                                     "working, and a smaller model fits")
    except Exception as exc:                      # a bug: its type and words
        error = protocol.error("python", message=traceback.format_exception_only(exc)[-1].strip())
    return "error", json.dumps(error, separators=(",", ":"), ensure_ascii=False)


def _mb(n: float) -> str:
    return f"{n / 1e6:,.1f} MB" if n < 1e10 else f"{n / 1e9:,.1f} GB"


class _Session:
    """One checkpoint: its headers, the weights read so far, the scores computed so far."""

    def __init__(self, files, limit: int):
        weights, config, names = {}, None, []
        for f in files:
            name = str(f.name)
            names.append(name)
            size = int(f.size)
            if name.endswith(".index.json"):
                continue                         # the shards' tensor names are in their own headers
            if name.endswith(".json"):
                if size > 10**7:
                    raise ValueError(f"{name} is {_mb(size)}: too large for a config.json")
                text = bytes(_read(f, 0, size))
                try:
                    config = json.loads(text.decode("utf-8"))
                except (UnicodeDecodeError, ValueError) as exc:
                    raise ValueError(f"{name} is not a JSON file ({exc}); choose the model's config.json") from None
                if not isinstance(config, dict):
                    raise ValueError(f"{name} must hold a JSON object (a model's config); got {type(config).__name__}")
            else:
                weights[name] = SafetensorsFile(_JsSource(f, size), size=size, name=name)
        if not weights:
            raise ValueError(f"no weights among the files chosen ({', '.join(names) or 'none'}): choose the model's "
                             f".safetensors file (and its config.json)")
        self.ck = ck = ckp.from_files(weights, config)
        L, H, M, D = ck.n_layers, ck.n_heads, ck.d_model, ck.d_head
        if L < 2:
            raise ValueError(f"the model has {L} layer: composition needs an earlier and a later layer")
        self.pairs = [(l1, l2) for l2 in range(1, L) for l1 in range(l2)]
        results = len(SCORES) * len(MODES) * (L * H) ** 2 * 8
        block = 3 * H * D * M * 4 + 16 * H * H * D * D * 8      # the readers' rows stacked; K, C and their copies
        self.need = ck.memory_bytes() + results + block
        if self.need > limit:
            raise ValueError(f"this model is too large for this tab: scoring it needs about {_mb(self.need)} of "
                             f"memory (its {L} layers of attention weights as float32, {_mb(ck.memory_bytes())}, "
                             f"and the scores), and this tab can use about {_mb(limit)} on this device. Models up "
                             f"to about {_mb(limit)} fit here; on a computer with more memory, or with "
                             f"python -m headspace scores, it runs. Nothing was read beyond the headers.")
        self.done = 0

    def allocate(self) -> None:
        """The arrays the steps fill, and the random baselines: taken once the files passed every check."""
        L, H, M, D = self.ck.n_layers, self.ck.n_heads, self.ck.d_model, self.ck.d_head
        self.bases = [None] * L                  # per layer: its heads' thin SVDs, as it is read
        self.scores = {s: np.zeros((len(MODES), L, H, L, H)) for s in SCORES}
        self.base = random_baselines(M, D)

    def opened(self) -> dict:
        ck = self.ck
        return {"summary": ck.summary(), "steps": ck.n_layers + len(self.pairs), "readSteps": ck.n_layers,
                "pairs": len(MODES) * ck.n_heads ** 2 * len(self.pairs), "needBytes": self.need,
                "baselines": {k: v[0] for k, v in self.base.items()}}

    def step(self, step: int) -> dict:
        ck, L, H = self.ck, self.ck.n_layers, self.ck.n_heads
        total = L + len(self.pairs)
        if not 0 <= step < total:
            raise ValueError(f"step must be 0 to {total - 1}; got {step}")
        if step != self.done:
            raise ValueError(f"step {step} asked for before step {self.done}: steps run in order")
        if step < L:
            W = [w[None] for w in ck.read_layer(step)]              # this layer alone, [1, n_heads, ...]
            self.bases[step] = layer_bases(*W, 0, MODES, writer=step < L - 1, readers=step > 0)
        else:
            l1, l2 = self.pairs[step - L]
            block = bases_scores(self.bases[l1]["writer"], [self.bases[l2][m] for m in MODES], (l1, l2))
            for s in SCORES:
                self.scores[s][:, l1, :, l2, :] = block[s]
        self.done = step + 1
        scored = max(0, self.done - L)
        return {"step": step, "steps": total, "phase": "read" if step < L else "score",
                "layersRead": min(self.done, L), "pairsDone": len(MODES) * H * H * scored,
                "bytesRead": ck.bytes_read, "finished": self.done == total}

    # ----------------------------------------------------------------------- what the page shows

    def _random(self, score: str, norm_product):
        """What random heads of these shapes score, for ``score`` (per pair for ``product_norm``)."""
        if score == "product_norm":
            return self.base["size_ratio"][0] * norm_product
        return np.full(np.shape(norm_product), self.base[score][0])

    def _rows(self):
        """Every (mode, l1, h1, l2, h2) with its scores and baselines, in the command line's order."""
        L, H = self.ck.n_layers, self.ck.n_heads
        mask = np.zeros((L, H, L, H), bool)
        for l1, l2 in self.pairs:
            mask[l1, :, l2, :] = True
        idx = np.argwhere(mask)
        for m, mode in enumerate(MODES):
            values = {s: self.scores[s][m][mask] for s in SCORES}
            for s, col in BASELINE.items():
                values[col] = self._random(s, values["norm_product"])
            yield mode, idx, values

    def _need_finished(self):
        if self.done < self.ck.n_layers + len(self.pairs):
            raise ValueError(f"the scores are not finished: {self.done} of {self.ck.n_layers + len(self.pairs)} steps")

    def csv(self) -> str:
        self._need_finished()
        lines = [",".join(["mode", "layer1", "head1", "layer2", "head2", *COLUMNS])]
        for mode, idx, values in self._rows():
            for i, (l1, h1, l2, h2) in enumerate(idx):
                lines.append(",".join([mode, str(l1), str(h1), str(l2), str(h2),
                                       *(repr(float(values[c][i])) for c in COLUMNS)]))
        return "\n".join(lines) + "\n"

    def view(self, mode: str, score: str, width: int, pair, heatmap: bool = True) -> dict:
        """One mode's heatmap of ``score`` (unless ``heatmap`` is false: a tap asks for the pair alone)
        with every pair's values in that mode, the top pairs by ``score`` over every mode, and
        ``pair``'s detail (default: the top pair)."""
        from headspace_site.figure.svg import render
        self._need_finished()
        if mode not in MODES:
            raise ValueError(f"mode must be one of Q, K, V; got {mode!r}")
        if score not in SCORES:
            raise ValueError(f"score must be one of {', '.join(SCORES)}; got {score!r}")
        width = int(min(max(width, 280), 1400))
        top = self._top(score)
        if pair is None:
            pair = [top[0]["layer1"], top[0]["head1"], top[0]["layer2"], top[0]["head2"]]
        l1, h1, l2, h2 = (int(v) for v in pair)
        L, H = self.ck.n_layers, self.ck.n_heads
        if not (0 <= l1 < l2 < L and 0 <= h1 < H and 0 <= h2 < H):
            raise ValueError(f"pair must be an earlier head and a later one, [l1, h1, l2, h2] with l1 < l2 < {L} "
                             f"and heads below {H}; got {pair}")
        detail = self._pair(l1, h1, l2, h2)
        out = {"n": (L - 1) * H, "heads": H, "top": top, "pair": detail, "names": {s: words(s) for s in SCORES},
               "random": {s: self.base[s][0] for s in ("frobenius", "svd_bound", "subspace", "size_ratio")},
               "pairSvg": render(self._pair_figure(detail, min(width, 640)), min(width, 640), uid="ownpair",
                                 css_class="live")}
        if heatmap:
            fig, box = self._heatmap(mode, score, width)
            out.update(svg=render(fig, width, uid=f"own{mode}", css_class="live"), box=box,
                       values=self._values(mode))
        return out

    def _values(self, mode: str) -> dict:
        """Every pair's scores in ``mode`` as the heatmap lays them out: ``{score: [n * n]}``, row-major,
        writers down, readers across, None where the reader is not later; 6 significant digits."""
        L, H = self.ck.n_layers, self.ck.n_heads
        m, n = MODES.index(mode), (L - 1) * H
        later = self._later()
        out = {}
        for s in SCORES:
            block = self.scores[s][m][:L - 1, :, 1:, :].reshape(n, n)
            out[s] = [float(f"{v:.6g}") if ok else None for v, ok in zip(block.ravel(), later.ravel())]
        return out

    def _later(self):
        L, H = self.ck.n_layers, self.ck.n_heads
        n = (L - 1) * H
        later = np.zeros((L - 1, H, L - 1, H), bool)
        for l1, l2 in self.pairs:
            later[l1, :, l2 - 1, :] = True
        return later.reshape(n, n)

    def _pair(self, l1, h1, l2, h2) -> dict:
        out = {"layer1": l1, "head1": h1, "layer2": l2, "head2": h2, "modes": {}}
        for m, mode in enumerate(MODES):
            row = {s: float(self.scores[s][m, l1, h1, l2, h2]) for s in SCORES}
            for s, col in BASELINE.items():
                row[col] = float(self._random(s, row["norm_product"]))
            out["modes"][mode] = row
        return out

    def _top(self, score: str, k: int = 10) -> list:
        rows = []
        for mode, idx, values in self._rows():
            key = values[score] / values[BASELINE[score]] if score in BASELINE else values[score]
            order = np.argsort(-key, kind="stable")[:k]
            for i in order:
                l1, h1, l2, h2 = (int(v) for v in idx[i])
                rows.append({"mode": mode, "layer1": l1, "head1": h1, "layer2": l2, "head2": h2, "key": float(key[i]),
                             **{c: float(v[i]) for c, v in values.items()}})
        rows.sort(key=lambda r: -r["key"])
        return rows[:k]

    def _heatmap(self, mode: str, score: str, width: int):
        """Rows: the writer heads of layers 0 .. n_layers - 2; columns: the reader heads of layers 1 ..
        n_layers - 1 (no head writes to a reader in its own layer or reads a later one's output)."""
        L, H = self.ck.n_layers, self.ck.n_heads
        n = (L - 1) * H
        m = MODES.index(mode)
        S = self.scores[score][m][:L - 1, :, 1:, :].reshape(n, n)
        N = self.scores["norm_product"][m][:L - 1, :, 1:, :].reshape(n, n)
        later = self._later()
        if score in BASELINE:
            Z, unit = S / np.where(later, self._random(score, N), 1), "× random"
        else:
            Z, unit = S, "‖A‖‖B‖"
        zmax = float(np.max(Z[later])) if later.any() else 1.0
        z = [[round(float(v), 4) if ok else None for v, ok in zip(row, oks)] for row, oks in zip(Z, later)]
        ticks = [k * H + (H - 1) / 2 for k in range(L - 1)]
        side = max(160, min(width - 140, 720))                      # room on the right for the colour bar
        every = max(1, int(np.ceil((L - 1) * 30 / side)))          # a label every 30 px at least
        rows = [f"L{l}" if l % every == 0 else "" for l in range(L - 1)]
        cols = [f"L{l}" if (l - 1) % every == 0 else "" for l in range(1, L)]
        margin = {"l": 44, "r": width - 44 - side, "t": 36, "b": 44}
        height = side + margin["t"] + margin["b"]
        trace = {"type": "heatmap", "z": z, "zmin": 0, "zmax": zmax or 1.0, "colorscale": SCORE_SCALE,
                 "colorbar": {"title": {"text": unit}, "thickness": 10}, "showscale": True, "hoverongaps": False}
        axis = {"zeroline": False, "showgrid": False}
        fig = {"data": [trace], "layout": {
            "height": height, "margin": margin, "showlegend": False,
            "title": {"text": f"{mode}-composition: {words(score)}", "font": {"size": 14}},
            "xaxis": {**axis, "tickvals": ticks, "ticktext": cols, "range": [-0.5, n - 0.5],
                      "title": {"text": "reader head"}},
            "yaxis": {**axis, "tickvals": ticks, "ticktext": rows, "range": [n - 0.5, -0.5],
                      "title": {"text": "writer head"}}}}
        box = {"x0": margin["l"], "y0": margin["t"], "x1": width - margin["r"], "y1": height - margin["b"],
               "width": width, "height": height}
        return fig, box

    def _pair_figure(self, detail: dict, width: int) -> dict:
        """One pair: each score with a random baseline, in each mode, as a multiple of what random
        heads give (the dotted line at 1); a bar per score and mode, the modes in their colours."""
        scored = [s for s in SCORES if s in BASELINE]
        rows = [f"{words(s)}, {m}" for s in scored for m in MODES]
        traces = []
        for m in MODES:
            ys = [f"{words(s)}, {m}" for s in scored]
            xs = [round(detail["modes"][m][s] / detail["modes"][m][BASELINE[s]], 4) for s in scored]
            traces.append({"type": "bar", "orientation": "h", "x": xs, "y": ys, "name": f"{m}-composition",
                           "marker": {"color": MODE_COLORS[m]}, "text": [f"{x:#.3g}×" for x in xs]})
        traces.append({"type": "scatter", "mode": "lines", "x": [1, 1], "y": [rows[0], rows[-1]],
                       "name": "random heads", "line": {"color": COLORS["ink"], "dash": "dot", "width": 1.5}})
        title = f"L{detail['layer1']}H{detail['head1']} → L{detail['layer2']}H{detail['head2']}, ÷ random heads'"
        most = max(max(t["x"]) for t in traces[:-1])
        return {"data": traces, "layout": {
            "height": 64 + 48 + 22 * len(rows), "margin": {"l": 120, "r": 16, "t": 64, "b": 48}, "showlegend": True,
            "title": {"text": title, "font": {"size": 14}},
            "legend": {"orientation": "h", "x": 0, "y": 1.0, "yanchor": "bottom", "bgcolor": "rgba(0,0,0,0)"},
            "yaxis": {"categoryorder": "array", "categoryarray": rows, "range": [len(rows) - 0.5, -0.5]},
            "xaxis": {"range": [0, max(1.2, most * 1.35)], "zeroline": True, "title": {"text": "× random heads"}}}}


class _JsSource:
    """A worker's file (or any object with ``read(offset, length)``) as a byte source."""

    def __init__(self, f, size: int):
        self.f, self.size = f, size

    def read(self, offset: int, length: int) -> bytes:
        return _read(self.f, offset, length)


def _read(f, offset: int, length: int) -> bytes:
    out = f.read(offset, length)
    return out.to_bytes() if hasattr(out, "to_bytes") else bytes(out)   # a JS Uint8Array, or bytes
