"""headspace_site.own_model, natively: the page's checkpoint ops give the command line's scores, and
every bad file is a refusal of kind checkpoint that leaves the page able to go on."""

import csv
import io
import json

import numpy as np
import pytest

from headspace import checkpoint as ckp
from headspace.cli import main
from headspace.layer_pairs import SCORES
from headspace.safetensors_file import to_bytes
from headspace_site import own_model
from headspace_site.own_model import Source, answer


def files_of(arch, **sizes):
    config = ckp.example_config(arch, **sizes)
    return config, [Source("model.safetensors", to_bytes(ckp.example_state(config, seed=2))),
                    Source("config.json", json.dumps(config).encode())]


def run_all(files, limit=10**9):
    status, out = answer("open", json.dumps({"limitBytes": limit}), files)
    assert status == "result", out
    opened = json.loads(out)
    for step in range(opened["steps"]):
        status, out = answer("step", json.dumps({"step": step}))
        assert status == "result", out
    assert json.loads(out)["finished"]
    return opened


@pytest.mark.parametrize("arch, sizes", [("gpt2", dict(n_layers=3, n_heads=4, d_model=32)),
                                         ("llama", dict(n_layers=3, n_heads=4, d_model=32, n_kv_heads=2))])
def test_the_page_csv_equals_the_command_line(tmp_path, arch, sizes, capsys):
    config, files = files_of(arch, **sizes)
    opened = run_all(files)
    assert opened["pairs"] == 3 * 16 * 3 and opened["summary"]["architecture"] == arch
    page = list(csv.DictReader(io.StringIO(json.loads(answer("csv", "{}")[1])["csv"])))
    (tmp_path / "config.json").write_text(json.dumps(config))
    (tmp_path / "model.safetensors").write_bytes(files[0].data.tobytes())
    out = tmp_path / "cli.csv"
    assert main(["scores", str(tmp_path), "--mode", "Q,K,V", "--metric", ",".join(SCORES),
                 "--out", str(out)]) == 0
    cli = list(csv.DictReader(out.open()))
    assert len(page) == len(cli) == 3 * 16 * 3
    key = lambda r: (r["mode"], r["layer1"], r["head1"], r["layer2"], r["head2"])   # noqa: E731
    cli = {key(r): r for r in cli}
    for r in page:
        for score in SCORES:
            assert float(r[score]) == pytest.approx(float(cli[key(r)][score]), rel=1e-5)


def test_view_draws_each_mode_and_a_pair():
    run_all(files_of("gpt2", n_layers=2, n_heads=2, d_model=8)[1])
    view = json.loads(answer("view", json.dumps({"mode": "V", "score": "product_norm", "width": 390}))[1])
    assert view["svg"].startswith("<svg") and view["n"] == 2 and view["box"]["width"] == 390
    assert len(view["top"]) == 10 and view["top"][0]["product_norm"] >= view["top"][-1]["product_norm"]
    only = json.loads(answer("view", json.dumps({"mode": "K", "pair": [0, 1, 1, 0], "heatmap": False}))[1])
    assert "svg" not in only and (only["pair"]["layer1"], only["pair"]["head1"]) == (0, 1)
    status, out = answer("view", json.dumps({"mode": "K", "pair": [1, 0, 1, 1]}))
    assert status == "error" and "pair must be an earlier head and a later one" in json.loads(out)["message"]


def refusal(files, limit=10**9):
    status, out = answer("open", json.dumps({"limitBytes": limit}), files)
    assert status == "error"
    error = json.loads(out)
    assert error["kind"] == "checkpoint"
    return error["message"]


def test_bad_files_are_refused_by_name_and_the_next_file_works():
    config, good = files_of("gpt2", n_layers=2, n_heads=2, d_model=8)
    data = good[0].data.tobytes()
    assert refusal([Source("notes.safetensors", b"these are not weights at all")]).startswith("not a safetensors file")
    assert "is truncated" in refusal([Source("model.safetensors", data[:-100]), good[1]])
    n = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + n])
    header["transformer.h.0.attn.c_attn.weight"]["data_offsets"][1] -= 4
    text = json.dumps(header).encode()
    lying = len(text).to_bytes(8, "little") + text + data[8 + n:]
    assert "header lies about tensor 'transformer.h.0.attn.c_attn.weight'" in refusal([Source("m.safetensors", lying), good[1]])
    bert = to_bytes({"encoder.layer.0.attention.self.query.weight": np.zeros((2, 2), np.float32)})
    message = refusal([Source("model.safetensors", bert)])
    assert "unknown architecture" in message and "encoder.layer.0.attention.self.query.weight" in message
    assert "h.0.attn.c_attn.weight" in message
    ints = {k: v for k, v in ckp.example_state(config).items()}
    raw = bytearray(to_bytes(ints))
    n = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8:8 + n])
    header["transformer.h.0.attn.c_proj.weight"]["dtype"] = "I32"      # same width: offsets still true
    text = json.dumps(header).encode()
    message_file = [Source("model.safetensors", len(text).to_bytes(8, "little") + text + bytes(raw[8 + n:])), good[1]]
    assert "'transformer.h.0.attn.c_proj.weight' has dtype I32; supported are F32, F16, BF16" in refusal(message_file)
    assert "is not a JSON file" in refusal([good[0], Source("config.json", b"{nope")])
    run_all(good)                                                       # and the page goes on


def test_too_large_is_refused_before_any_weight_is_read():
    _, files = files_of("gpt2", n_layers=3, n_heads=4, d_model=32)
    message = refusal(files, limit=50_000)
    assert "too large for this tab" in message and "this tab can use about 0.1 MB" in message
    assert "Nothing was read beyond the headers" in message


def test_steps_run_in_order():
    _, files = files_of("gpt2", n_layers=2, n_heads=2, d_model=8)
    answer("open", "{}", files)
    status, out = answer("step", '{"step": 1}')
    assert status == "error" and "step 1 asked for before step 0" in json.loads(out)["message"]
    status, out = answer("csv", "{}")
    assert status == "error" and "not finished" in json.loads(out)["message"]
    answer("close", "{}")
    assert own_model._session is None


def test_a_refused_file_leaves_the_last_model_as_it_was():
    run_all(files_of("gpt2", n_layers=2, n_heads=2, d_model=8)[1])
    refusal([Source("x.safetensors", b"not a checkpoint, just text")])
    status, out = answer("view", json.dumps({"mode": "K", "pair": [0, 0, 1, 1], "heatmap": False}))
    assert status == "result" and json.loads(out)["pair"]["layer2"] == 1
