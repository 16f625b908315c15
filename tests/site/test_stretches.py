"""A figure at least every ``LIMIT`` words (issue 35, point 13): no article makes a reader on a
phone scroll through more than about 600 words of prose without one. ``python -m sitebuild.stretches``
prints each article's longest stretch and where it starts."""

from __future__ import annotations

import pytest

from sitebuild import stretches
from test_content import POSTS

#: Articles still over the limit, each with the longest stretch it may have: a bound that only
#: goes down. None today; an entry needs its reason beside it.
OVER: dict[str, int] = {}


@pytest.mark.parametrize("path", POSTS, ids=lambda p: p.name)
def test_no_long_stretch_of_prose_without_a_figure(path):
    words, line = stretches.longest(path.read_text(encoding="utf-8"))
    bound = OVER.get(path.name, stretches.LIMIT)
    assert words <= bound, (f"{path.name}: {words} words of prose without a figure from line {line} "
                            f"(at most {bound}): move what the reader does not need yet after the next "
                            f"figure, or add a figure that earns its place")


def test_the_exceptions_are_still_needed():
    for name, bound in OVER.items():
        words, _ = stretches.longest((stretches.POSTS / name).read_text(encoding="utf-8"))
        assert stretches.LIMIT < words <= bound, f"{name}: now {words} words; lower or drop its entry in OVER"


def test_a_caption_is_part_of_its_figure_and_an_inline_formula_is_a_word():
    text = ("+++\ntitle = 't'\n+++\nOne two $x^2$ three.\n\n$$\na + b\n$$\n\n"
            "{{< demo \"d\" >}}\nA caption of six words.\n{{< /demo >}}\n"
            "Four {{< value \"k\" >}} five.\n{{< demo name=\"e\" />}}\nSix.\n\n## References\n\n- Many words here.\n")
    assert stretches.stretches(text) == [(4, 1), (3, 12), (1, 14)]  # from the line a figure ends on
    # $x^2$ is one word however long its source; a display formula is not prose
    assert stretches.longest("One $\\frac{a}{b} + \\sum_i c_i$ two.\n") == (3, 1)
