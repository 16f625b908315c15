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
* ``table`` (Q-composition, lookup redesigned; docs/decisions/0004-zoo-mechanisms.md, section 8): a
  table of 8 x 4 cells, each one payload token and nothing else, the cell of (colour, shape) always at
  position ``colour * 4 + shape``, then triples ``a b answer`` as in lookup (8 colour cues, 4 shape
  cues). A sequence has 4 payload symbols: in half of the sequences each colour's four differ and each
  shape has each symbol twice (two 4 x 4 Latin squares, stacked, rows shuffled; drawn afresh for every
  sequence), so one cue alone leaves ln 4 nats; in the other half they are drawn freely (a first
  gradient). The 4 symbols are written as 4 tokens drawn for the sequence from a pool of 12 payload
  tokens, and the answers as the 4 answer tokens of the same pool entries (the answer to a cell holding
  pool token p is answer token p), so that every token occurs and the vocabulary (36) is wider than the
  zoo's d_model of 32, as the token scores need. A cell holds nothing but its payload: no first-layer
  head can gather a (colour, payload) or (shape, payload) pair at a cue, which is how lookup's models
  answered without attending to the entry. The answer's address needs both cues in one *query*: a
  previous-token head brings the colour to the shape cue. A head can still *switch* on one colour
  (attend to that colour's cell in the cue's shape column and, for any other colour, to the colour cue
  instead): one layer of 4 heads covers at most 4 of the 8 colours; two layers could cover all 8, so
  the table does not force the lookup: the mechanism is measured, not assumed. Its models are a trial,
  out of the zoo: trained with fixed payloads first (``scripts/train_zoo.py``'s ``canonical_steps``), two
  of five seeds looked the entry up; with a learning-rate decay per stage (``lr_restart``), three.

The present zoo (``zoo/``, docs/decisions/0004-zoo-mechanisms.md) adds two tasks to the first zoo's:

* ``recall`` (V-composition, redesigned so that the answer's position cannot be found by its
  keys): a context of 10 pairs ``value key`` (10 distinct keys of 16, values of 16 drawn with
  replacement), then 6 questions ``ask(key) value``, 6 of the 10 keys in random order. At
  ``ask(k)`` the next token is the value that came just *before* ``k``. The value's position
  cannot know the key that follows it (causal mask), so no key there can match the question;
  and the ask token is not the key token, so it never matches itself (nor an earlier question's
  answer). The short route is a previous-token head writing "my predecessor was v" at every key,
  and a later head that attends from ``ask(k)`` to ``k`` and reads ``v`` through its *values*.
  A one-layer model can only guess among the context's values not asked yet (about 2 nats;
  asking all the keys let such a guess reach ln 8! / 8 = 1.33 nats with 8 pairs). The other
  route (docs/decisions/0004-zoo-mechanisms.md): a first-layer head at ``ask(k)`` copies the
  *position* of ``k`` into the question, and a later head's query shifts it by one.
* ``words``: word-level tokens of source code (``WordVocab``; an identifier is one token, so a
  repeated stretch of code is a repeated stretch of a few tokens), in windows of 96 words, each
  batch the more repetitive half of twice as many windows (ranked by their masked positions);
  the mask marks positions whose current two words occurred earlier in the window (where
  copying can help).
* ``reptext`` (issue 47: real text in which an induction mechanism forms): the characters of
  ``text``'s source in windows of 64, each batch the most repetitive quarter of four times as many
  windows (ranked, as ``words``' are, by their masked positions), so that copying pays sooner: in
  the 20 evaluation batches, 48% of positions repeat an earlier pair of characters and the character
  after the pair's last occurrence is the next one at 79% of them, against 30% and 66% in ``text``'s. Still
  windows of the source as it is, nothing pasted twice; the mask is ``text``'s.

>>> toks, mask = task_batch("reverse", np.random.default_rng(0), batch=2)
>>> toks.shape, mask.shape, toks.dtype
((2, 32), (2, 31), dtype('int64'))
>>> t = int(np.argmax(mask[0]))          # first masked position: its next token is the one
>>> j = int(np.flatnonzero(toks[0, :t] == toks[0, t] - PARTNER)[-1])   # partner of the one
>>> bool(toks[0, t + 1] == toks[0, j - 1] + PARTNER)                     # before the earlier occurrence
True
"""

from __future__ import annotations

import re

import numpy as np

__all__ = ["TASKS", "TRIAL_TASKS", "MODE_OF_TASK", "task_batch", "encode_text", "decode_text", "TEXT_VOCAB",
           "text_mask", "LOOKUP_VOCAB", "latin_square", "PARTNER",
           "WordVocab", "split_words"]

#: The benchmark zoo's tasks, in the order the benchmark lists them.
TASKS = ("induction", "reverse", "recall", "lookup", "words", "text", "reptext")
#: Tasks that ``task_batch`` draws but whose models are trials, not in the zoo (the benchmark's groups
#: leave them out): the table (docs/decisions/0004, section 8).
TRIAL_TASKS = ("table",)
#: The kind of composition each task is built to need (text: none is forced; induction is expected).
MODE_OF_TASK = {"induction": "K", "reverse": "V", "lookup": "Q", "table": "Q", "text": "K", "recall": "V",
                "words": "K",
                "reptext": "K"}

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

#: Table's vocabulary: a pool of 12 payload tokens, 8 colour cues, 4 shape cues and 12 answer tokens (one
#: per pool token), 36 in all, more than the zoo's d_model of 32 (W_E must be able to have full column
#: rank: the benchmark's token scores factor it); a table of 8 x 4 cells, the payload of (colour, shape)
#: at position ``colour * TABLE_SHAPES + shape``, 4 payload symbols a sequence written as 4 pool tokens
#: drawn for it, then 8 questions (docs/decisions/0004, section 8).
TABLE_COLOURS, TABLE_SHAPES, TABLE_PAYLOADS, TABLE_POOL, TABLE_QUESTIONS, TABLE_LATIN = 8, 4, 4, 12, 8, 0.5
TABLE_CELLS = TABLE_COLOURS * TABLE_SHAPES
TABLE_COLOUR = TABLE_POOL
TABLE_SHAPE = TABLE_COLOUR + TABLE_COLOURS
TABLE_ANSWER = TABLE_SHAPE + TABLE_SHAPES
TABLE_VOCAB = TABLE_ANSWER + TABLE_POOL

#: Recall's vocabulary: 16 values, 16 keys, 16 ask tokens (``ask(k) = k + RECALL_ASK - RECALL_KEY``).
RECALL_KEY, RECALL_ASK = 16, 32
RECALL_VOCAB, RECALL_PAIRS, RECALL_QUESTIONS = 48, 10, 6
#: Words: the vocabulary size (the most frequent words of the training text, then one unknown id).
WORDS_VOCAB = 1024

SHAPES = {"induction": (64, 32), "reverse": (64, 32), "lookup": (LOOKUP_VOCAB, 40), "text": (TEXT_VOCAB, 64),
          "recall": (RECALL_VOCAB, 2 * RECALL_PAIRS + 2 * RECALL_QUESTIONS),
          "table": (TABLE_VOCAB, TABLE_CELLS + 3 * TABLE_QUESTIONS), "words": (WORDS_VOCAB, 96),
          "reptext": (TEXT_VOCAB, 64)}
#: Tasks whose sequences are windows of a corpus (``task_batch``'s ``corpus``).
CORPUS_TASKS = ("text", "words", "reptext")
#: Corpus tasks whose batch is the more repetitive ``1/k`` of ``k`` times as many windows: ``{task: k}``.
REPETITIVE_DRAWS = {"words": 2, "reptext": 4}


def encode_text(text: str) -> np.ndarray:
    """Character ids of ``text`` (tabs become a space; other non-ASCII characters one unknown id).

    >>> encode_text("a = 1\\n").tolist(), decode_text(encode_text("a = 1\\n"))
    ([66, 1, 30, 1, 18, 0], 'a = 1\\n')
    """
    data = text.replace("\t", " ").encode("latin-1", errors="replace")
    return _LOOKUP[np.frombuffer(data, dtype=np.uint8)]


_WORD = re.compile(r"\n *|[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[^\sA-Za-z0-9_]")


def split_words(text: str) -> list[str]:
    """Source code as words: a newline with its indentation, an identifier, a number, or one other
    non-space character (spaces inside a line are dropped).

    >>> split_words("def f(x):\\n    return x+1")
    ['def', 'f', '(', 'x', ')', ':', '\\n    ', 'return', 'x', '+', '1']
    """
    return _WORD.findall(text.replace("\t", "    "))


class WordVocab:
    """The ``WORDS_VOCAB - 1`` most frequent words of a text (ties by first appearance), then one
    unknown id. Word-level tokens make an identifier one token, so a repeated span of code is a
    repeated span of a few tokens, and copying it pays from its second token on.

    >>> v = WordVocab.fit("a b a c a b", size=3)
    >>> v.words, v.encode("a b c d").tolist()
    (['a', 'b'], [0, 1, 2, 2])
    """

    def __init__(self, words: list[str]):
        self.words = list(words)
        self._ids = {w: i for i, w in enumerate(self.words)}

    @classmethod
    def fit(cls, text: str, size: int = WORDS_VOCAB) -> "WordVocab":
        if size < 2:
            raise ValueError(f"size must be at least 2 (a word and the unknown id); got {size}")
        counts: dict[str, int] = {}
        for w in split_words(text):
            counts[w] = counts.get(w, 0) + 1
        order = sorted(counts, key=lambda w: -counts[w])          # stable: ties keep first appearance
        return cls(order[:size - 1])

    def encode(self, text: str) -> np.ndarray:
        unknown = len(self.words)
        return np.array([self._ids.get(w, unknown) for w in split_words(text)], dtype=np.int64)


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
    if task not in TASKS + TRIAL_TASKS:
        raise ValueError(f"task must be one of {list(TASKS + TRIAL_TASKS)}; got {task!r}")
    if not isinstance(batch, (int, np.integer)) or batch < 1:
        raise ValueError(f"batch must be a positive integer; got {batch!r}")
    d_vocab, seq = SHAPES[task]
    if task in CORPUS_TASKS:
        if corpus is None or len(corpus) <= seq:
            raise ValueError(f"corpus must be an array of more than {seq} token ids for task {task!r}; "
                             f"got {None if corpus is None else len(corpus)}")
        if task in REPETITIVE_DRAWS:
            # the more repetitive 1/k of k times as many windows (natural text, ranked by how many
            # positions repeat an earlier pair of words or characters), so that copying pays sooner
            starts = rng.integers(0, len(corpus) - seq, REPETITIVE_DRAWS[task] * batch)
            tokens = np.stack([corpus[s:s + seq] for s in starts]).astype(np.int64)
            mask = text_mask(tokens)
            keep = np.sort(np.argsort(-mask.sum(axis=1), kind="stable")[:batch])
            return tokens[keep], mask[keep]
        starts = rng.integers(0, len(corpus) - seq, batch)
        tokens = np.stack([corpus[s:s + seq] for s in starts]).astype(np.int64)
        return tokens, text_mask(tokens)
    tokens = rng.integers(0, d_vocab, (batch, seq))
    mask = np.zeros((batch, seq - 1), dtype=bool)
    for i in range(batch):
        if task == "lookup":
            _lookup_row(rng, tokens[i], mask[i])
            continue
        if task == "table":
            _table_row(rng, tokens[i], mask[i])
            continue
        if task == "recall":
            _recall_row(rng, tokens[i], mask[i])
            continue
        n = int(rng.integers(6, 13))
        f = int(rng.integers(0, seq - 2 * n + 1))
        span = rng.choice(d_vocab if task == "induction" else PARTNER, n, replace=False)
        tokens[i, f:f + n] = span
        tokens[i, f + n:f + 2 * n] = span if task == "induction" else span[::-1] + PARTNER
        # loss positions whose next token the circuit predicts: inside the second copy
        mask[i, f + n:f + 2 * n - 1] = True
    return tokens.astype(np.int64), mask


def latin_square(rng, n: int = 4) -> np.ndarray:
    """A random n x n Latin square: the cyclic square, or (n a power of two) the XOR one (Klein's for 4),
    rows, columns and symbols permuted.

    >>> sq = latin_square(np.random.default_rng(0), 8)
    >>> all(len(set(r)) == 8 for r in sq) and all(len(set(c)) == 8 for c in sq.T)
    True
    """
    if not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive integer; got {n!r}")
    i, j = np.indices((n, n))
    xor = n & (n - 1) == 0
    base = (i + j) % n if (rng.integers(0, 2) or not xor) else i ^ j
    return rng.permutation(n)[base[rng.permutation(n)][:, rng.permutation(n)]]


def _lookup_row(rng, row, mask_row):
    """One ``lookup`` sequence in place: 16 dictionary entries, then ``a b answer`` triples."""
    payload = latin_square(rng)                        # payload[colour, shape]
    colour_shape = rng.permutation(16)
    row[:16] = colour_shape * 4 + payload.ravel()[colour_shape]
    for t in range(16, len(row) - 2, 3):
        colour, shape = rng.integers(0, 4, 2)
        row[t:t + 3] = COLOUR_CUE + colour, SHAPE_CUE + shape, ANSWER + payload[colour, shape]
        mask_row[t + 1] = True


def _table_row(rng, row, mask_row):
    """One ``table`` sequence in place: 8 x 4 cells (payloads, colour-major), then ``a b answer`` triples."""
    # symbol[colour, shape], drawn for this sequence: two 4 x 4 Latin squares stacked, rows shuffled, so
    # that each colour's four symbols differ and each shape has each symbol twice (one cue alone: ln 4);
    # in the other sequences (1 - TABLE_LATIN) the 32 symbols are drawn freely, so that one cue alone
    # tells something: the first gradient (with Latin squares only, five seeds sat at ln 4 for 1000 steps)
    symbol = np.concatenate([latin_square(rng, TABLE_PAYLOADS) for _ in range(TABLE_COLOURS // TABLE_PAYLOADS)])
    symbol = symbol[rng.permutation(TABLE_COLOURS)]
    if rng.random() >= TABLE_LATIN:
        symbol = rng.integers(0, TABLE_PAYLOADS, symbol.shape)
    # the symbols as pool tokens drawn for this sequence, the same map for the cells and the answers: four
    # payload tokens alone would leave the vocabulary (20) narrower than d_model (docs/decisions/0004)
    payload = rng.choice(TABLE_POOL, TABLE_PAYLOADS, replace=False)[symbol]
    row[:TABLE_CELLS] = payload.ravel()
    for t in range(TABLE_CELLS, len(row) - 2, 3):
        colour, shape = rng.integers(0, TABLE_COLOURS), rng.integers(0, TABLE_SHAPES)
        row[t:t + 3] = TABLE_COLOUR + colour, TABLE_SHAPE + shape, TABLE_ANSWER + payload[colour, shape]
        mask_row[t + 1] = True


def _recall_row(rng, row, mask_row):
    """One ``recall`` sequence in place: ``value key`` pairs, then ``ask(key) value`` for some keys."""
    n = RECALL_PAIRS
    keys = rng.choice(RECALL_ASK - RECALL_KEY, n, replace=False)
    values = rng.integers(0, RECALL_KEY, n)
    row[0:2 * n:2], row[1:2 * n:2] = values, RECALL_KEY + keys
    for q, i in enumerate(rng.permutation(n)[:RECALL_QUESTIONS]):
        t = 2 * n + 2 * q
        row[t:t + 2] = RECALL_ASK + keys[i], values[i]
        mask_row[t] = True
