"""The tasks of the benchmark zoo: sequences that force one kind of composition each.

Each task draws ``(tokens, mask)``: ``tokens [batch, seq]`` integer ids for ordinary
next-token training, and ``mask [batch, seq-1]`` (bool) marking the *loss positions*
where the task's circuit acts (position ``t`` predicts ``tokens[:, t+1]``). Elsewhere
the next token is random (or, for text, ordinary language). numpy only, seeded.

* ``induction`` (K-composition, Olsson et al. 2022): random tokens, a span of 6 to 12
  fresh tokens, the same span again, random tokens. In the repeat, the next token is the
  one that followed the earlier occurrence of the current token: a previous-token head
  writes "my predecessor was a" at every position, and an induction head's *keys* read it.
* ``reverse`` (V-composition): a span of tokens from the first half of the vocabulary, then
  the span reversed, each token replaced by its *partner* (``token + PARTNER``, the second
  half). In the reversed copy the next token is the partner of the one that came *before*
  the earlier occurrence of the current token's own. A key cannot know what follows it
  (causal mask), so the later head attends to the earlier occurrence itself (its query, a
  partner, finds the plain token) and reads, through its *values*, the predecessor that a
  previous-token head wrote there. (An earlier design reversed the plain tokens: the later
  head's query then matched itself as well as the earlier occurrence, and copying the matched
  token is always wrong, so the first thing every model learned was to look away from it; no
  model left that plateau in 3000 steps.) It is not forced either: the reversed copy mirrors
  the span about the first partner, so the answer's position can be worked out from positions
  and brought into a later head's *query*; most zoo models attend to the answer's position
  directly, and have larger Q paths than V paths (reverse-rms s0 has no V path of 0.1 nats).
* ``lookup`` (Q-composition): a dictionary of 16 entry tokens, one for each (colour, shape) of
  4 x 4, each with a payload of 4; an entry token is (colour, shape, payload), 64 in all. Then
  triples ``a b answer``: ``a`` one of 4 colour cues, ``b`` one of 4 shape cues, ``answer`` one
  of 4 answer tokens, the payload of the entry with the colour of ``a`` and the shape of ``b``.
  The payloads form a Latin square (each colour's four entries have four different payloads, and
  so have each shape's), so that either cue alone, or the two cues' candidate sets added as votes
  in the logits, leave all four answers equally likely (ln 4 nats). Only a query that holds both
  cues separates the entry: at ``b`` the shape is in the token, the colour one position back,
  and an earlier head must bring it into the later head's *query*. (An earlier design, answers
  the whole entry token and payloads drawn at random, let a model add two votes, one per cue, in
  its logits: V-composition, no Q needed.)
* ``text``: characters of source code (``encode_text``); the mask marks positions whose
  current two characters occurred earlier in the sequence (where copying can help).

>>> toks, mask = task_batch("reverse", np.random.default_rng(0), batch=2)
>>> toks.shape, mask.shape, toks.dtype
((2, 32), (2, 31), dtype('int64'))
>>> t = int(np.argmax(mask[0]))          # first masked position: its next token is the one
>>> j = int(np.flatnonzero(toks[0, :t] == toks[0, t] - PARTNER)[-1])   # partner of the one
>>> bool(toks[0, t + 1] == toks[0, j - 1] + PARTNER)                     # before the earlier occurrence
True
"""

from __future__ import annotations

import numpy as np

__all__ = ["TASKS", "MODE_OF_TASK", "task_batch", "encode_text", "decode_text", "TEXT_VOCAB", "text_mask",
           "LOOKUP_VOCAB", "latin_square", "PARTNER"]

#: Task names, in the order the benchmark lists them.
TASKS = ("induction", "reverse", "lookup", "text")
#: The kind of composition each task is built to need (text: none is forced; induction is expected).
MODE_OF_TASK = {"induction": "K", "reverse": "V", "lookup": "Q", "text": "K"}

#: Character vocabulary of the text task: newline, printable ASCII 32..126, and one id for anything else.
_CHARS = "\n" + "".join(chr(c) for c in range(32, 127))
TEXT_VOCAB = len(_CHARS) + 1
_UNKNOWN = len(_CHARS)
_LOOKUP = np.full(256, _UNKNOWN, dtype=np.int64)
_LOOKUP[[ord(c) for c in _CHARS]] = np.arange(len(_CHARS))
#: Reverse copy: the partner of token ``x < PARTNER`` is ``x + PARTNER``.
PARTNER = 32
#: Lookup's vocabulary: 64 entry tokens ``(colour * 4 + shape) * 4 + payload``, then 4 colour cues,
#: 4 shape cues and 4 answer tokens (one per payload).
COLOUR_CUE, SHAPE_CUE, ANSWER = 64, 68, 72
LOOKUP_VOCAB = 76

SHAPES = {"induction": (64, 32), "reverse": (64, 32), "lookup": (LOOKUP_VOCAB, 40), "text": (TEXT_VOCAB, 64)}


def encode_text(text: str) -> np.ndarray:
    """Character ids of ``text`` (tabs become a space; other non-ASCII characters one unknown id).

    >>> encode_text("a = 1\\n").tolist(), decode_text(encode_text("a = 1\\n"))
    ([66, 1, 30, 1, 18, 0], 'a = 1\\n')
    """
    data = text.replace("\t", " ").encode("latin-1", errors="replace")
    return _LOOKUP[np.frombuffer(data, dtype=np.uint8)]


def decode_text(ids) -> str:
    """Inverse of ``encode_text`` (the unknown id becomes ``?``)."""
    return "".join(_CHARS[i] if i < len(_CHARS) else "?" for i in np.asarray(ids).ravel())


def text_mask(tokens: np.ndarray) -> np.ndarray:
    """``[batch, seq-1]``: position ``t`` (``t >= 1``) whose bigram ``tokens[t-1], tokens[t]`` occurred
    earlier in the sequence, where an induction circuit can predict the next token."""
    tokens = np.asarray(tokens)
    b, s = tokens.shape
    mask = np.zeros((b, s - 1), dtype=bool)
    for i in range(b):
        seen = set()
        for t in range(1, s - 1):
            bigram = (int(tokens[i, t - 1]), int(tokens[i, t]))
            mask[i, t] = bigram in seen
            seen.add(bigram)
    return mask


def task_batch(task: str, rng: np.random.Generator, batch: int = 32, corpus: np.ndarray | None = None):
    """``(tokens [batch, seq], mask [batch, seq-1])`` for ``task`` (see the module docstring).

    ``corpus`` (character ids from ``encode_text``) is needed for ``text`` only: windows
    of ``seq`` characters start at random offsets in it.
    """
    if task not in TASKS:
        raise ValueError(f"task must be one of {list(TASKS)}; got {task!r}")
    if not isinstance(batch, (int, np.integer)) or batch < 1:
        raise ValueError(f"batch must be a positive integer; got {batch!r}")
    d_vocab, seq = SHAPES[task]
    if task == "text":
        if corpus is None or len(corpus) <= seq:
            raise ValueError(f"corpus must be an array of more than {seq} character ids for task 'text'; "
                             f"got {None if corpus is None else len(corpus)}")
        starts = rng.integers(0, len(corpus) - seq, batch)
        tokens = np.stack([corpus[s:s + seq] for s in starts]).astype(np.int64)
        return tokens, text_mask(tokens)
    tokens = rng.integers(0, d_vocab, (batch, seq))
    mask = np.zeros((batch, seq - 1), dtype=bool)
    for i in range(batch):
        if task == "lookup":
            _lookup_row(rng, tokens[i], mask[i])
            continue
        n = int(rng.integers(6, 13))
        f = int(rng.integers(0, seq - 2 * n + 1))
        span = rng.choice(d_vocab if task == "induction" else PARTNER, n, replace=False)
        tokens[i, f:f + n] = span
        tokens[i, f + n:f + 2 * n] = span if task == "induction" else span[::-1] + PARTNER
        # loss positions whose next token the circuit predicts: inside the second copy
        mask[i, f + n:f + 2 * n - 1] = True
    return tokens.astype(np.int64), mask


def latin_square(rng) -> np.ndarray:
    """A random 4 x 4 Latin square: the cyclic or the Klein square, rows, columns and symbols permuted."""
    i, j = np.indices((4, 4))
    base = (i + j) % 4 if rng.integers(0, 2) else i ^ j
    return rng.permutation(4)[base[rng.permutation(4)][:, rng.permutation(4)]]


def _lookup_row(rng, row, mask_row):
    """One ``lookup`` sequence in place: 16 dictionary entries, then ``a b answer`` triples."""
    payload = latin_square(rng)                        # payload[colour, shape]
    colour_shape = rng.permutation(16)
    row[:16] = colour_shape * 4 + payload.ravel()[colour_shape]
    for t in range(16, len(row) - 2, 3):
        colour, shape = rng.integers(0, 4, 2)
        row[t:t + 3] = COLOUR_CUE + colour, SHAPE_CUE + shape, ANSWER + payload[colour, shape]
        mask_row[t + 1] = True
