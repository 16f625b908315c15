"""The numpy forward pass of every shipped model against a fresh torch forward of the trainer's own
network, in float64 (this venv has torch; the main suite compares with the outputs stored at training).

The trainer (scripts/train_models.py) builds the network the weights came from; loading the
shipped TransformerLens-layout weights into it and running the reference tokens must give the
logits ``headspace.model`` computes.
"""

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from headspace import model as hm
from headspace import store

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "tests" / "data" / "reference"


def _trainer():
    spec = importlib.util.spec_from_file_location("train_models", ROOT / "scripts" / "train_models.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["train_models"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", store.list_models())
def test_numpy_forward_matches_a_fresh_torch_forward(name):
    trainer = _trainer()
    spec = next(s for s in trainer.SPECS if s.name == name)
    net = trainer.build(spec).double()
    net.load_tl(dict(np.load(store.SHIPPED / name / "weights.npz")))
    net = net.double()
    tokens = np.load(REFERENCE / f"{name}.npz")["tokens"]
    with torch.no_grad():
        torch_logits = net(torch.tensor(tokens)).numpy()
    logits, _ = hm.load(name).run(tokens)
    np.testing.assert_allclose(logits, torch_logits, rtol=0, atol=1e-5)
