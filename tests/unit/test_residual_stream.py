"""The residual-stream schematic at the top of the primer, against dense references.

Every number it draws is a Frobenius composition score, ``||L R||_F / (||L||_F ||R||_F)``: here it is
recomputed with plain numpy from the shipped weights, and the head-to-head ones are checked
against ``all_composition_scores``, the library's every-pair function.
"""

from __future__ import annotations

import numpy as np
import pytest

from headspace.composition import all_composition_scores
from headspace_site.demos import REGISTRY
from headspace_site.figure import shipped as _shipped
from headspace_site.demos import residual_stream as rs
from headspace_site.figure.registry import ParameterError

MODEL = _shipped.DEFAULT_MODEL


def frob(left, right) -> float:
    """The Frobenius composition score, spelt out."""
    return float(np.linalg.norm(left @ right) / (np.linalg.norm(left) * np.linalg.norm(right)))


def reader(m, l, h, mode):
    q, k, v, o = m.W_Q[l, h], m.W_K[l, h], m.W_V[l, h], m.W_O[l, h]
    return {"Q": q @ k.T, "K": k @ q.T, "V": v @ o}[mode]


def run(**params):
    return REGISTRY["residual-stream"].run(params)


@pytest.mark.parametrize("input", list(rs.INPUTS))
@pytest.mark.parametrize("head", rs.HEAD_OPTIONS)
def test_every_line_is_a_composition_score(head, input):
    m = _shipped.weights(MODEL, None)
    mode = rs.INPUTS[input]
    layer, h = int(head[1]), int(head[3])
    pairs = all_composition_scores(m.W_Q, m.W_K, m.W_V, m.W_O, mode)
    out = run(head=head, input=input)["outputs"]
    right = reader(m, layer, h, mode)
    want_reads = {rs.TOKENS: frob(m.W_E, right), rs.POSITIONS: frob(m.W_pos, right)}
    want_reads.update({f"L{l}H{g}": frob(m.W_V[l, g] @ m.W_O[l, g], right)
                       for l in range(layer) for g in range(m.W_Q.shape[1])})
    ov = m.W_V[layer, h] @ m.W_O[layer, h]
    want_writes = {f"L{l}H{g}": frob(ov, reader(m, l, g, mode))
                   for l in range(layer + 1, m.W_Q.shape[0]) for g in range(m.W_Q.shape[1])}
    want_writes[rs.UNEMBED] = frob(ov, m.W_U)
    assert list(out["reads"]) == list(want_reads) and list(out["writes"]) == list(want_writes)
    for got, want in ((out["reads"], want_reads), (out["writes"], want_writes)):
        for k in want:
            assert got[k] == pytest.approx(want[k], abs=2e-6), k
    for k in out["reads"]:
        if k.startswith("L"):
            assert out["reads"][k] == pytest.approx(float(pairs[int(k[1]), int(k[3]), layer, h]), abs=2e-6)


def test_a_first_layer_head_reads_only_the_embeddings_and_a_last_layer_head_writes_only_the_logits():
    assert list(run(head="L0H2")["outputs"]["reads"]) == [rs.TOKENS, rs.POSITIONS]
    assert list(run(head="L1H3")["outputs"]["writes"]) == [rs.UNEMBED]


def test_the_induction_head_reads_the_previous_token_head_most_through_its_key():
    """What the primer's caption says (scripts/sitebuild/values/primer.py checks it at build time too)."""
    (l1, h1), (l2, h2) = _shipped.roles(MODEL)
    reads = run(head=rs.head_name(l2, h2), input="key")["outputs"]["reads"]
    assert max(reads, key=reads.get) == rs.head_name(l1, h1)


def _lines(fig):
    """The lines of reads and writes (the two legend entries draw nothing)."""
    return [t for t in fig["data"] if t["name"].startswith("what ") and t.get("showlegend") is False]


@pytest.mark.parametrize("head", rs.HEAD_OPTIONS)
def test_thicker_lines_are_larger_scores_and_avoid_every_other_box(head):
    out = run(head=head, input="query")
    scores = {**out["outputs"]["reads"], **out["outputs"]["writes"]}
    lines = _lines(out["figure"])
    assert len(lines) == len(scores)
    widths = [t["line"]["width"] for t in lines]
    order = list(scores.values())
    assert all((a < b) == (wa < wb) for a, wa in zip(order, widths) for b, wb in zip(order, widths)
               if abs(a - b) > 1e-3)
    boxes = [(s["x0"], s["x1"], s["y0"], s["y1"]) for s in out["figure"]["layout"]["shapes"]]
    at = rs._places(2, 4)
    for line, other in zip(lines, scores):
        ends = {at[other], at[head]}
        pts = list(zip(line["x"], line["y"]))
        for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
            for t in np.linspace(0.02, 0.98, 97):
                x, y = x0 + t * (x1 - x0), y0 + t * (y1 - y0)
                for bx0, bx1, by0, by1 in boxes:
                    inside = bx0 + 1e-6 < x < bx1 - 1e-6 and by0 + 1e-6 < y < by1 - 1e-6
                    centre = ((bx0 + bx1) / 2, (by0 + by1) / 2)
                    assert not inside or centre in ends, f"{head}: the line to {other} crosses the box at {centre}"


def test_the_chosen_head_has_the_thick_box():
    # drawn as a line (a trace, which a move redraws in place), around the head's box (a shape)
    fig = run(head="L0H3")["figure"]
    thick = [t for t in fig["data"] if t.get("line", {}).get("width") == 3 and len(t["x"]) == 5]
    assert len(thick) == 1 and thick[0]["name"] == "L0H3"
    xs, ys = thick[0]["x"], thick[0]["y"]
    box = next(s for s in fig["layout"]["shapes"] if s["x0"] < 3 < s["x1"] and s["y0"] < 1 < s["y1"])
    assert (min(xs), max(xs), min(ys), max(ys)) == (box["x0"], box["x1"], box["y0"], box["y1"])
    assert {s["line"]["width"] for s in fig["layout"]["shapes"]} == {1}


@pytest.mark.parametrize("params, name", [({"head": "L2H0"}, "head"), ({"input": "keys"}, "input"),
                                          ({"model": "gpt2"}, "model")])
def test_bad_choices_are_refused_naming_the_control(params, name):
    with pytest.raises(ParameterError) as err:
        run(**params)
    assert err.value.param == name and repr(list(params.values())[0]) in str(err.value)
