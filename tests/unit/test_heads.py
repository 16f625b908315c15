"""headspace.heads: the probe's arguments, refused in their own names."""

import pytest

from headspace.heads import repeated_span, repeated_tokens


@pytest.mark.parametrize("call, message", [
    (lambda: repeated_tokens(128, 64, seed=-1), r"seed must be a non-negative integer or a sequence of them; got -1$"),
    (lambda: repeated_tokens(128, 64, seed="a"), r"seed must be a non-negative integer .*; got 'a'$"),
    (lambda: repeated_span(50, 3, 5, seed=[1, -2]), r"seed must be a non-negative integer .*; got \[1, -2\]$"),
    (lambda: repeated_tokens(128, 64, batch=0), r"batch must be at least 1; got 0$"),
    (lambda: repeated_tokens(128, 2), r"n_ctx must be at least 4; got 2$"),
])
def test_bad_probe_arguments_are_named(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_a_seed_sequence_still_seeds():
    """scripts/train_models seeds its probe with [model seed, 1]: a sequence is a seed too."""
    assert (repeated_tokens(10, 8, seed=[3, 1]) == repeated_tokens(10, 8, seed=[3, 1])).all()
