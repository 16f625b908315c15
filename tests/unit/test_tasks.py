"""The zoo's tasks (headspace.tasks): each sequence carries the structure its circuit needs, and
lookup leaves nothing to a model that reads one cue at a time."""

import numpy as np
import pytest

from headspace.tasks import (ANSWER, COLOUR_CUE, PARTNER, SHAPE_CUE, SHAPES, TABLE_ANSWER, TABLE_CELLS, TABLE_COLOUR,
                             TABLE_COLOURS, TABLE_PAYLOADS, TABLE_POOL, TABLE_SHAPE, TABLE_SHAPES, TABLE_VOCAB,
                             latin_square, task_batch)


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


def test_table_answers_the_cell_of_the_cues_colour_and_shape_and_one_cue_alone_leaves_ln_4():
    # the cell of (colour, shape) is at colour * TABLE_SHAPES + shape and holds only its payload, one of 4
    # tokens drawn for the sequence from the pool, and the answer is the same pool entry's answer token;
    # each colour's four payloads differ (the colour alone leaves four equally likely) and each shape has
    # each of the 4 payloads twice (so has the shape alone), in the sequences drawn as Latin: the rest,
    # drawn freely, give the models a first gradient
    tokens, mask = task_batch("table", np.random.default_rng(0), 256)
    assert tokens.shape == (256, TABLE_CELLS + 3 * 8) and tokens.max() < TABLE_VOCAB
    latin, used = 0, set()
    for row, m in zip(tokens, mask):
        payload = row[:TABLE_CELLS].reshape(TABLE_COLOURS, TABLE_SHAPES)
        assert set(payload.ravel()) <= set(range(TABLE_POOL)) and len(set(payload.ravel())) <= TABLE_PAYLOADS
        used |= set(payload.ravel())
        rows_differ = all(len(set(p)) == TABLE_SHAPES for p in payload)
        per_shape = TABLE_COLOURS // TABLE_PAYLOADS
        if rows_differ and all(sorted(np.unique(p, return_counts=True)[1]) == [per_shape] * TABLE_PAYLOADS
                               for p in payload.T):
            latin += 1
        ts = np.flatnonzero(m)
        assert len(ts) == (len(row) - TABLE_CELLS) // 3
        for t in ts:
            c, s = row[t - 1] - TABLE_COLOUR, row[t] - TABLE_SHAPE
            assert 0 <= c < TABLE_COLOURS and 0 <= s < TABLE_SHAPES
            assert row[t + 1] == TABLE_ANSWER + payload[c, s]
    # TABLE_LATIN = 0.5 (a free draw has distinct rows with odds under 1e-3)
    assert 0.4 < latin / len(tokens) < 0.6
    assert used == set(range(TABLE_POOL))                  # every pool token occurs


def test_the_table_vocabulary_is_wider_than_the_zoo_models():
    # the benchmark's token scores factor W_E [d_vocab, d_model], which needs d_vocab >= d_model (32) and
    # every token to occur (a token that never occurs keeps a random embedding row): the pool of payloads
    assert TABLE_VOCAB >= 32 and SHAPES["table"][0] == TABLE_VOCAB == 2 * TABLE_POOL + TABLE_COLOURS + TABLE_SHAPES
    tokens, _ = task_batch("table", np.random.default_rng(1), 64)
    assert set(np.unique(tokens)) == set(range(TABLE_VOCAB))


def test_latin_squares_of_any_size_and_bad_size():
    rng = np.random.default_rng(1)
    for n in (4, 6, 8):
        sq = latin_square(rng, n)
        assert all(sorted(r) == list(range(n)) for r in sq) and all(sorted(c) == list(range(n)) for c in sq.T)
    with pytest.raises(ValueError, match="n must be a positive integer; got 0"):
        latin_square(rng, 0)
