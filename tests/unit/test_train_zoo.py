"""The zoo's training script (scripts/train_zoo.py): the learning-rate schedule and the table's curriculum,
the parts of a trial's recipe that torch does not run (torch is not needed to import the script)."""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import train_zoo  # noqa: E402
from train_zoo import Config, canonical_payloads, lr_factor  # noqa: E402

from headspace.tasks import TABLE_ANSWER, TABLE_CELLS, TABLE_PAYLOADS, TABLE_POOL, task_batch  # noqa: E402


def test_a_restarted_schedules_first_stage_is_a_run_of_that_many_steps():
    # the table trial's first stage decays as the first table's 1500-step runs did (docs/decisions/0004, section 8)
    restarted = Config("table", None, False, 2, steps=2500, lr_restart=1500)
    short = Config("table", None, False, 2, steps=1500)
    assert [lr_factor(restarted, s) for s in range(1500)] == [lr_factor(short, s) for s in range(1500)]
    # the second stage warms up and decays again over its own 1000 steps
    second = Config("table", None, False, 2, steps=1000)
    assert [lr_factor(restarted, 1500 + s) for s in range(1000)] == [lr_factor(second, s) for s in range(1000)]
    assert abs(lr_factor(restarted, 1499) - 0.1) < 1e-5 and lr_factor(restarted, 1500) == 1 / restarted.warmup


def test_without_a_restart_the_schedule_is_one_warmup_and_one_decay():
    c = Config("table", None, False, 2, steps=2500)
    factors = [lr_factor(c, s) for s in range(2500)]
    assert factors[99] == 1.0 and abs(factors[-1] - 0.1) < 1e-5
    assert all(a >= b for a, b in zip(factors[99:], factors[100:]))


def test_canonical_payloads_relabel_each_sequences_pool_tokens_to_the_first_four_in_order():
    tokens, mask = task_batch("table", np.random.default_rng(3), 64)
    fixed = canonical_payloads(tokens)
    for row, new, m in zip(tokens, fixed, mask):
        used = np.unique(row[:TABLE_CELLS])
        lut = {int(p): i for i, p in enumerate(used)}
        assert len(used) <= TABLE_PAYLOADS
        assert new[:TABLE_CELLS].tolist() == [lut[int(p)] for p in row[:TABLE_CELLS]]
        answers = np.flatnonzero(m) + 1
        assert new[answers].tolist() == [TABLE_ANSWER + lut[int(a) - TABLE_ANSWER] for a in row[answers]]
        others = np.ones(len(row), bool)
        others[:TABLE_CELLS] = others[answers] = False
        assert np.array_equal(new[others], row[others])                # the cues are untouched
    assert fixed[:, :TABLE_CELLS].max() < TABLE_PAYLOADS < TABLE_POOL


def test_the_table_trial_is_the_recipe_decision_0004_reports():
    (two, one) = [c for c in train_zoo.TRIALS if c.task == "table"]
    for c in (two, one):
        assert (c.steps, c.canonical_steps, c.lr_restart) == (2500, 1500, 1500)
    assert (two.n_layers, one.n_layers) == (2, 1)
