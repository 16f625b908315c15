"""python -m headspace: the command line a researcher uses on a shipped model, a directory or an .npz."""

import csv
import json
import subprocess
import sys

import numpy as np
import pytest

from headspace import store
from headspace.cli import main
from headspace.composition import all_composition_scores
from headspace.model import load


def test_scores_csv_holds_every_pair_and_equals_the_library(tmp_path, capsys):
    out = tmp_path / "s.csv"
    assert main(["scores", "attn-only-2l-rms", "--mode", "Q,V", "--metric", "frobenius,svd_bound",
                 "--out", str(out), "--top", "3"]) == 0
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 2 * 4 * 4                       # two modes, 4 x 4 (layer 0, layer 1) pairs
    m = load("attn-only-2l-rms").fold_norm()
    want = all_composition_scores(m.W_Q, m.W_K, m.W_V, m.W_O, "V", "svd_bound")
    for r in rows:
        if r["mode"] == "V":
            idx = tuple(int(r[k]) for k in ("layer1", "head1", "layer2", "head2"))
            assert float(r["svd_bound"]) == pytest.approx(want[idx], rel=1e-6)   # float32 weights as stored
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "attn-only-2l-rms: Q/V-composition, 3 of 32 pairs, by frobenius"
    assert printed[1].split() == ["mode", "writer", "reader", "frobenius", "svd_bound"]
    best = max(rows, key=lambda r: float(r["frobenius"]))
    assert printed[2].split()[:3] == [best["mode"], f"L{best['layer1']}H{best['head1']}", f"L{best['layer2']}H{best['head2']}"]


def test_npz_with_config_beside_it_equals_the_directory(tmp_path, capsys):
    stored = store.read_model("attn-only-2l")
    np.savez(tmp_path / "w.npz", **stored.state)
    (tmp_path / "w.json").write_text(json.dumps(stored.config))
    assert main(["scores", str(tmp_path / "w.npz"), "--top", "1"]) == 0
    from_npz = capsys.readouterr().out.splitlines()[2]
    assert main(["scores", "attn-only-2l", "--top", "1"]) == 0
    assert capsys.readouterr().out.splitlines()[2] == from_npz


@pytest.mark.parametrize("make, args, message", [
    (None, ["scores", "/no/such/dir"], r"path must be a model directory or a shipped model name; got '/no/such/dir'"),
    (None, ["scores", "/no/such.npz", "--config", "/no/c.json"], r"weights file /no/such.npz does not exist"),
    ("no-config", ["scores", "{d}/w.npz"], r"no config for .*w.npz: pass --config"),
    ("missing-key", ["scores", "{d}/w.npz"], r"weights must include 'blocks.1.attn.W_K' with shape \[4, 64, 16\]; it is missing"),
    ("wrong-shape", ["scores", "{d}/w.npz"], r"blocks.0.attn.W_O must have shape \[4, 16, 64\]; got \[4, 16, 63\]"),
    (None, ["scores", "attn-only-2l", "--mode", "X"], r"--mode must be a comma list of Q, K, V; got 'X'"),
    (None, ["heads", "attn-only-2l", "--batch", "0"], r"--batch must be at least 1; got 0"),
    (None, ["scores", "{d}/gone.npz"], r"weights file .*gone.npz does not exist"),
    (None, ["scores", "attn-only-2l", "--out", "{d}/no/s.csv"],
     r"--out must be a file in an existing directory; got '.*/no/s.csv' \(no directory '.*/no'\)"),
    (None, ["heads", "attn-only-2l", "--seed", "-1"], r"--seed must be 0 or more; got -1"),
    (None, ["bench", "--mode", "X"], r"--mode must be one of task, largest, mechanism, Q, K, V; got 'X'"),
    (None, ["bench", "--mode", "largest", "--group", "induction"], r"--group must be all with --mode largest"),
    (None, ["bench", "--held-out", "--splits", "0"], r"--splits must be at least 1; got 0"),
    (None, ["bench", "--held-out-statistic", "x"], r"--held-out-statistic must be one of spearman, .*; got 'x'"),
    (None, ["bench", "--csv", "{d}/no/t.csv"], r"--csv must be a file in an existing directory; got '.*/no/t.csv'"),
    (None, ["bench", "--splits", "5"], r"--splits applies to --held-out .*; got --splits 5 without it"),
    (None, ["bench", "--agreement", "--mode", "largest"], r"--agreement reads the benchmark table .*; got --mode largest"),
])
def test_clear_errors(tmp_path, capsys, make, args, message):
    stored = store.read_model("attn-only-2l")
    state = dict(stored.state)
    if make == "missing-key":
        del state["blocks.1.attn.W_K"]
    if make == "wrong-shape":
        state["blocks.0.attn.W_O"] = state["blocks.0.attn.W_O"][..., :63]
    if make:
        np.savez(tmp_path / "w.npz", **state)
        if make != "no-config":
            (tmp_path / "config.json").write_text(json.dumps(stored.config))
    assert main([a.format(d=tmp_path) for a in args]) == 2
    out, err = capsys.readouterr()
    assert out == ""                                  # found before any work is printed
    assert err.startswith(f"headspace {args[0]}: ")
    assert __import__("re").search(message, err), err


def test_heads_finds_the_trained_circuit(capsys):
    assert main(["heads", "attn-only-2l"]) == 0
    lines = capsys.readouterr().out.splitlines()
    kinds = {line.split()[0]: line.split()[-1] for line in lines[2:] if len(line.split()) == 4}
    assert kinds["L0H1"] == "previous-token"
    assert {h for h, k in kinds.items() if k == "induction"} == {"L1H0", "L1H1", "L1H2", "L1H3"}


def test_python_dash_m_runs_it(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "headspace", "scores", "attn-only-2l", "--top", "2"],
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("attn-only-2l: K-composition, 2 of 16 pairs")


def test_a_reader_that_stops_reading_is_no_traceback(tmp_path):
    """``python -m headspace bench | head -1``: the pipe closes under the writer; it stops quietly."""
    proc = subprocess.Popen([sys.executable, "-m", "headspace", "bench"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=tmp_path)
    proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.wait()
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
