"""The shipped path-ablation table (written by ``headspace_site.figure.causal_table``, read by
``headspace_site.figure.shipped.causal_lookup``): it is what the demos would compute, it is used only
for the model files it was computed from, and the demos read it."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from headspace import causal, store
from headspace.composition import MODES
from headspace_site.demos import REGISTRY
from headspace_site.figure import causal_table as T
from headspace_site.figure import shipped as _shipped


def _stored() -> dict:
    return json.loads(_shipped.CAUSAL_TABLE.read_text())["models"]


def test_table_covers_every_shipped_model_step_and_mode_of_these_files():
    """Not stale: each model's fingerprint is the manifest's, and every row the demos ask for is there."""
    manifest = store.read_manifest()["models"]
    stored = _stored()
    assert set(stored) == set(manifest)
    for name, m in stored.items():
        assert m["fingerprint"] == _shipped.causal_fingerprint(manifest[name])
        want = {_shipped.causal_key(step, mode) for step in (None, *_shipped.checkpoint_steps(name)) for mode in MODES}
        assert set(m["rows"]) == want
        n_later = int(_shipped.later_mask(m["shape"]).sum())
        assert all(len(row) == n_later for row in m["rows"].values())


# A fresh computation of every row is slow; a seeded sample of them is a fraction of it: two rows
# of each model, the final weights and the first checkpoint among them.
def _sample():
    rng = np.random.default_rng(13)
    out = []
    for name in sorted(_stored()):
        steps = _shipped.checkpoint_steps(name)
        out += [(name, None, str(rng.choice(MODES))), (name, steps[0], str(rng.choice(MODES))),
                (name, int(rng.choice(steps[1:])), str(rng.choice(MODES)))]
    return out


@pytest.mark.slow  # the full run only (scripts/test --fast leaves it out)
@pytest.mark.parametrize("name,step,mode", _sample())
def test_sampled_rows_equal_a_fresh_path_ablation(name, step, mode):
    fresh = causal.path_ablation(_shipped.weights(name, step), _shipped.eval_batch(name), mode)
    shipped = _shipped.causal_lookup(_shipped.models_where(), name, step, mode)
    np.testing.assert_allclose(shipped, fresh, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(T.compute_row(name, step, mode), _shipped.later_pairs(fresh), rtol=1e-9, atol=1e-12)


def test_demos_read_the_table_without_running_the_model(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("path_ablation ran: the shipped table should have answered")
    monkeypatch.setattr(causal, "path_ablation", refuse)
    _shipped._scores.cache_clear()
    try:
        name = "attn-only-2l-rms"
        out = REGISTRY["composition-over-training"].run({"model": name, "mode": "K"})["outputs"]
        assert out["steps"] == list(_shipped.checkpoint_steps(name))
        l1, h1 = _shipped.roles(name)[0]
        l2, h2 = _shipped.roles(name)[1]
        want = [float(_shipped.causal_lookup(_shipped.models_where(), name, s, "K")[l1, h1, l2, h2]) for s in out["steps"]]
        assert out["scores"]["causal"] == want
    finally:
        _shipped._scores.cache_clear()


def test_other_model_files_get_no_rows(tmp_path):
    """A retrained model (another sha256 in its manifest) is computed, not read from the table."""
    where = tmp_path / "models"
    shutil.copytree(store.models_dir(), where)
    manifest = json.loads((where / "manifest.json").read_text())
    entry = manifest["models"]["attn-only-2l"]
    entry["files"]["weights.npz"]["sha256"] = "0" * 64
    (where / "manifest.json").write_text(json.dumps(manifest))
    assert _shipped.causal_lookup(str(where), "attn-only-2l", None, "K") is None
    assert _shipped.causal_lookup(str(where), "attn-only-2l-rms", None, "K") is not None
    assert _shipped.causal_lookup(str(store.models_dir()), "attn-only-2l", None, "K") is not None


def test_unknown_rows_are_none_and_bad_models_raise():
    where = _shipped.models_where()
    assert _shipped.causal_lookup(where, "attn-only-2l", 7, "K") is None        # no checkpoint at step 7
    assert _shipped.causal_lookup(where, "nonesuch", None, "K") is None
    with pytest.raises(ValueError, match="shipped model name .*got 'nonesuch'"):
        T.compute_row("nonesuch", None, "K")
