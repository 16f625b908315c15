"""The zoo's tasks (headspace.tasks): each sequence carries the structure its circuit needs, and
lookup leaves nothing to a model that reads one cue at a time."""

import numpy as np
import pytest

from headspace.tasks import (ANSWER, COLOUR_CUE, PARTNER, SHAPE_CUE, TABLE_ANSWER, TABLE_COLOUR, TABLE_COLOURS,
                             TABLE_SHAPE, task_batch)


def lookup_rows(n=64, seed=0):
    tokens, mask = task_batch("lookup", np.random.default_rng(seed), n)
    for row, m in zip(tokens, mask):
        entries = row[:16]
        colour, shape, payload = entries // 16, entries // 4 % 4, entries % 4
        yield row, m, colour, shape, payload


def test_lookup_answers_the_entry_with_the_first_cues_colour_and_the_second_cues_shape():
    for row, m, colour, shape, payload in lookup_rows():
        assert sorted(colour * 4 + shape) == list(range(16))           # one entry per colour and shape
        for t in np.flatnonzero(m):
            c, s = row[t - 1] - COLOUR_CUE, row[t] - SHAPE_CUE
            assert 0 <= c < 4 and 0 <= s < 4
            (entry,) = np.flatnonzero((colour == c) & (shape == s))
            assert row[t + 1] == ANSWER + payload[entry]


def test_lookup_one_cue_alone_leaves_every_answer_equally_likely():
    # the payloads form a Latin square: the four entries of a colour have four different payloads,
    # and so have the four of a shape; votes from either cue, or both added, cannot pick the answer
    for _, _, colour, shape, payload in lookup_rows():
        for attr in (colour, shape):
            for v in range(4):
                assert sorted(payload[attr == v]) == [0, 1, 2, 3]


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


def test_table_answers_the_cell_of_the_cues_colour_and_shape_and_one_cue_alone_leaves_ln_4():
    # the cell of (colour, shape) is at colour * 4 + shape and holds only its payload; each colour's four
    # payloads differ and each shape has each payload twice, so either cue alone leaves four equally likely
    # (in the sequences drawn as Latin: the rest, drawn freely, give the models a first gradient)
    tokens, mask = task_batch("table", np.random.default_rng(0), 256)
    n = 4 * TABLE_COLOURS
    latin = 0
    for row, m in zip(tokens, mask):
        payload = row[:n].reshape(TABLE_COLOURS, 4)
        assert set(payload.ravel()) <= {0, 1, 2, 3}
        rows_differ = all(sorted(p) == [0, 1, 2, 3] for p in payload)
        if rows_differ and all(sorted(p) == [0, 0, 1, 1, 2, 2, 3, 3] for p in payload.T):
            latin += 1
        ts = np.flatnonzero(m)
        assert len(ts) == (len(row) - n) // 3
        for t in ts:
            c, s = row[t - 1] - TABLE_COLOUR, row[t] - TABLE_SHAPE
            assert 0 <= c < TABLE_COLOURS and 0 <= s < 4
            assert row[t + 1] == TABLE_ANSWER + payload[c, s]
    assert 0.4 < latin / len(tokens) < 0.6                 # TABLE_LATIN = 0.5 (a free draw is Latin with odds ~1e-8)
