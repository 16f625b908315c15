"""headspace.store: where models live, reading them checked, writing them reproducibly."""

import json
from pathlib import Path

import numpy as np
import pytest

import headspace
from headspace import store


def test_shipped_models_are_package_data(monkeypatch):
    """Bare names resolve inside the installed package, never in a source tree around it."""
    monkeypatch.delenv("HEADSPACE_MODELS", raising=False)
    assert store.SHIPPED == Path(headspace.__file__).parent / "models"
    assert store.models_dir() == store.SHIPPED
    assert store.model_directory("attn-only-2l") == store.SHIPPED / "attn-only-2l"


@pytest.mark.parametrize("name", store.list_models())
def test_write_model_reproduces_the_shipped_files(tmp_path, name):
    """Writing what read_model read gives the shipped bytes back, and the manifest's sha256."""
    final = store.read_model(name)
    checkpoints = {s.step: s.state for s in store.read_checkpoints(name)}
    entry = json.loads((store.SHIPPED / "manifest.json").read_text())["models"][name]
    fields = {k: v for k, v in entry.items() if k != "files"}
    d = store.write_model(tmp_path, name, final.config, final.state, checkpoints=checkpoints,
                          training_curve=store.read_training_curve(name), **fields)
    written = json.loads((tmp_path / "manifest.json").read_text())["models"][name]
    assert written == entry
    for f in entry["files"]:
        assert (d / f).read_bytes() == (store.SHIPPED / name / f).read_bytes(), f
    first = min(checkpoints)
    again = store.read_model(d, step=first)   # and it reads back, checked against the new manifest
    np.testing.assert_array_equal(again.state["embed.W_E"], checkpoints[first]["embed.W_E"])


def test_write_model_keeps_other_models(tmp_path):
    a = store.read_model("attn-only-2l")
    store.write_model(tmp_path, "one", a.config, a.state)
    store.write_model(tmp_path, "two", a.config, a.state, description="a copy")
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert list(manifest["models"]) == ["one", "two"]
    assert manifest["models"]["two"]["description"] == "a copy"
    with pytest.raises(ValueError, match=r"name must be a plain directory name; got 'a/b'"):
        store.write_model(tmp_path, "a/b", a.config, a.state)


def test_checksum_mismatch_names_the_file(tmp_path):
    a = store.read_model("attn-only-2l")
    d = store.write_model(tmp_path, "m", a.config, a.state)
    cfg = dict(a.config, n_ctx=32)
    (d / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(ValueError, match=r"checksum mismatch for .*m/config.json: manifest sha256"):
        store.read_model(d)
    assert store.read_model(d, verify=False).config["n_ctx"] == 32


def test_read_state_npz(tmp_path):
    a = store.read_model("attn-only-2l-rms")
    np.savez(tmp_path / "w.npz", **a.state)
    (tmp_path / "c.json").write_text(json.dumps(a.config))
    got = store.read_state_npz(tmp_path / "w.npz", tmp_path / "c.json")
    assert got.config == a.config and sorted(got.state) == sorted(a.state)
    with pytest.raises(ValueError, match=r"weights file .*nope.npz does not exist"):
        store.read_state_npz(tmp_path / "nope.npz", tmp_path / "c.json")
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(ValueError, match=r"config .*bad.json is not valid JSON"):
        store.read_state_npz(tmp_path / "w.npz", tmp_path / "bad.json")
    (tmp_path / "c.json").write_text("[1]")
    with pytest.raises(ValueError, match=r"must hold a JSON object; got list"):
        store.read_state_npz(tmp_path / "w.npz", tmp_path / "c.json")
    (tmp_path / "c.json").write_text(json.dumps(a.config))
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match=r"junk.npz is not a readable .npz file: an .npz is a zip archive "
                                         r"\(np.savez\), starting with b'PK'; it starts with b'not a zi'"):
        store.read_state_npz(tmp_path / "junk.npz", tmp_path / "c.json")
    with open(tmp_path / "one.npz", "wb") as f:
        np.save(f, np.zeros(3))                       # a lone .npy under an .npz name
    with pytest.raises(ValueError, match=r"one.npz is not a readable .npz file: .* it starts with b'\\x93NUMPY"):
        store.read_state_npz(tmp_path / "one.npz", tmp_path / "c.json")
