"""The zoo's tasks (headspace.tasks): each sequence carries the structure its circuit needs, and
lookup leaves nothing to a model that reads one cue at a time."""

import numpy as np
import pytest

from headspace.tasks import ANSWER, COLOUR_CUE, PARTNER, SHAPE_CUE, task_batch


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


def test_reptext_batches_are_the_most_repetitive_quarter_of_the_texts_windows():
    """``reptext``: windows of the corpus as they are (nothing pasted), the mask ``text``'s, and the batch the
    quarter of four times as many windows with the most masked positions."""
    from headspace.tasks import REPETITIVE_DRAWS, SHAPES, text_mask
    corpus = np.random.default_rng(0).integers(0, 90, 20000)
    corpus[5000:5400] = np.tile(np.arange(20), 20)                    # one repetitive stretch
    tokens, mask = task_batch("reptext", np.random.default_rng(1), 8, corpus)
    seq = SHAPES["reptext"][1]
    assert tokens.shape == (8, seq) and (mask == text_mask(tokens)).all()
    windows = {tuple(corpus[s:s + seq]) for s in range(len(corpus) - seq)}
    assert all(tuple(row) in windows for row in tokens)
    # the same draw of starts, ranked by hand
    rng = np.random.default_rng(1)
    starts = rng.integers(0, len(corpus) - seq, REPETITIVE_DRAWS["reptext"] * 8)
    drawn = np.stack([corpus[s:s + seq] for s in starts])
    counts = text_mask(drawn).sum(1)
    assert REPETITIVE_DRAWS["reptext"] == 4
    assert sorted(mask.sum(1)) == sorted(np.sort(counts)[-8:])
    with pytest.raises(ValueError, match="corpus"):
        task_batch("reptext", np.random.default_rng(1), 8, None)
