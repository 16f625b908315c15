"""What the benchmark's models do, measured: one row per configuration, one dot per seed.

Each model of the zoo is labelled by the mechanism it measurably uses (``headspace.mechanisms``: the
attention of its heads to the positions the task names, and the effect of the path between the two
heads the mechanism needs), not by the one its task was designed for. The dot sits at that path's
effect (nats lost when it is mean-ablated, on a log scale; an effect at most ``FLOOR`` is drawn at it),
coloured by the measured label or, for comparison, by the designed one; the dashed line is the
threshold a path must reach for the mechanism to count as used. Read from the benchmark's table
(``benchmark.json``, each model's ``mechanism``), so the figure follows the zoo when it is retrained.

Outputs: ``differ``, how many models use another mechanism than their task's design (``none formed``
included); ``n_models``, how many the figure shows.

>>> from headspace_site.demos import REGISTRY
>>> out = REGISTRY["zoo-mechanisms"].run({})["outputs"]
>>> 0 <= out["differ"] <= out["n_models"]
True
"""

from __future__ import annotations

import numpy as np

from headspace.mechanisms import LABELS, PATH

from headspace_site.demos.score_benchmark import table
from headspace_site.figure.names import family_short
from headspace_site.figure.registry import Output, Param, register
from headspace_site.figure.style import COLORS, figure, scatter

COLOURINGS = ("measured", "designed")
_COLOURING_WORDS = {"measured": "what it does, measured", "designed": "what its task was designed for"}
_TITLES = {"measured": "Mechanisms, measured", "designed": "Mechanisms, as designed"}
#: one colour per label, in LABELS' order; "none formed" grey
_LABEL_COLOURS = dict(zip(LABELS, (COLORS["blue"], COLORS["purple"], COLORS["green"], COLORS["orange"],
                                   COLORS["red"], "#a0741c", COLORS["muted"])))
#: the two longest labels, shortened so the key fits a phone's row (the figure has no other V-composition)
_KEY_NAMES = {"previous-token V-composition": "V-composition", "direct attention to the answer": "attention to the answer"}
FLOOR = 1e-3          # nats: effects at or below it (zero, or the noise's negative side) are drawn here
_JITTER = 0.12        # each seed's offset within its row, so equal effects stay apart


def _log(effect: float) -> float:
    return float(np.log10(max(effect, FLOOR)))


@register(
    "zoo-mechanisms", "What each model of the zoo does, measured",
    key="A row per configuration, a dot per seed at its mechanism's path effect (log scale, floor 0.001); "
        "dashed: a used path's threshold.",
    params=[
        Param("colouring", "colour by", "select", "measured", options=COLOURINGS,
              option_labels=tuple(_COLOURING_WORDS[c] for c in COLOURINGS),
              help="each model's measured mechanism, or the one its task was designed to need"),
    ],
    outputs=[
        Output("differ", "not as designed", "integer",
               "models whose measured mechanism is not their task's designed one"),
        Output("n_models", "models", "integer", "how many models the figure shows (two or three layers)"),
    ],
    needs_models=True,
)
def zoo_mechanisms(colouring: str) -> dict:
    models = table()["models"]
    families = list(dict.fromkeys(m["family"] for m in models))
    by_label: dict[str, tuple[list, list]] = {label: ([], []) for label in LABELS}
    for row, fam in enumerate(families):
        seeds = [m for m in models if m["family"] == fam]
        for k, m in enumerate(seeds):
            label = m["mechanism"]["label" if colouring == "measured" else "designed"]
            xs, ys = by_label[label]
            xs.append(_log(m["mechanism"]["effect"]))
            ys.append(row + (k - (len(seeds) - 1) / 2) * _JITTER)
    traces = [scatter([_log(PATH), _log(PATH)], [-0.6, len(families) - 0.4], name="used from here",
                      mode="lines", color=COLORS["muted"], showlegend=False,
                      line={"color": COLORS["muted"], "width": 1, "dash": "dash"})]
    for label, (xs, ys) in by_label.items():
        if xs:
            traces.append(scatter(xs, ys, name=_KEY_NAMES.get(label, label), color=_LABEL_COLOURS[label], size=7))
    ticks = [-3, -2, -1, 0]
    # the key takes up to six rows at a phone's width: room for them above the plot before fit lays it out
    fig = figure(traces, title=_TITLES[colouring], height=480, margin={"l": 44, "r": 10, "t": 150, "b": 40},
                 xaxis={"title": {"text": "effect of its path (nats)"}, "range": [-3.2, 0.8],
                        "tickmode": "array", "tickvals": ticks,
                        "ticktext": ["0.001", "0.01", "0.1", "1"], "zeroline": False},
                 yaxis={"tickmode": "array", "tickvals": list(range(len(families))),
                        "ticktext": [family_short(f) for f in families],
                        "range": [len(families) - 0.4, -0.6], "zeroline": False, "showgrid": False})
    differ = sum(m["mechanism"]["label"] != m["mechanism"]["designed"] for m in models)
    return {"figure": fig, "outputs": {"differ": int(differ), "n_models": len(models)}}
