"""The zoo's tasks (headspace.tasks): each sequence carries the structure its circuit needs."""

import numpy as np
import pytest

from headspace.tasks import PARTNER, task_batch


@pytest.mark.parametrize("task", ["induction", "reverse"])
def test_copy_tasks_mark_the_positions_their_circuit_predicts(task):
    tokens, mask = task_batch(task, np.random.default_rng(1), 64)
    for row, m in zip(tokens, mask):
        ts = np.flatnonzero(m)
        assert 5 <= len(ts) <= 11
        for t in ts:
            if task == "induction":
                j = np.flatnonzero(row[:t] == row[t])[-1]             # the earlier copy of the current token
                assert row[t + 1] == row[j + 1]
            else:                                                      # a partner in the reversed copy
                assert row[t] >= PARTNER
                (j,) = np.flatnonzero(row[:t] == row[t] - PARTNER)[-1:]
                assert row[t + 1] == row[j - 1] + PARTNER
