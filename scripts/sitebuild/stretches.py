"""The longest stretch of prose a reader meets without a figure, per article.

A reader on a phone should not scroll through more than about 600 words
(``LIMIT``) before the next figure. This counts, in an article's markdown, the
words of running prose between one figure (a ``demo`` shortcode, caption
included) and the next, from the top of the article to its References. Words
are runs of letters or digits: display maths, code blocks, HTML comments and
tags, link targets and shortcode calls are dropped first; an inline formula
and a ``value`` shortcode count as one word each (a reader reads $W_{OV}$ as
they read a word; a value prints a number). Headings and tables count: they
are read on the way.

    python -m sitebuild.stretches          # one line per article: longest stretch, where it starts

>>> longest("+++\\ntitle = 't'\\n+++\\nOne two $x^2$ three.\\n{{< demo \\"d\\" />}}\\nFour five.\\n")
(4, 1)
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

POSTS = Path(__file__).resolve().parents[2] / "site" / "content" / "posts"
LIMIT = 600  # "about 600 words": the bound (issue 35, point 13)

_FIGURE = re.compile(r"\{\{<\s*demo\b.*?(?:/>\}\}|>\}\}.*?\{\{<\s*/demo\s*>\}\})", re.S)
_DROP = [
    re.compile(r"\A\+\+\+\n.*?\n\+\+\+\n", re.S),                  # front matter
    re.compile(r"^## References\b.*", re.S | re.M),              # the references close the article
    re.compile(r"^```.*?^```[^\n]*$", re.S | re.M),              # fenced code
    re.compile(r"<!--.*?-->", re.S),
    re.compile(r"\$\$.+?\$\$", re.S),                            # display maths
]
_INLINE_MATHS = re.compile(r"\$(?:[^$\n]|\n(?!\s*\n))+?\$")      # one word each, after display maths
_MARKUP = [re.compile(r"(?<=\])\([^)\s]*\)"),                      # link targets
           re.compile(r"</?[A-Za-z][^>\n]*>")]                       # HTML tags
_VALUE = re.compile(r"\{\{<\s*value\b.*?>\}\}", re.S)
_SHORTCODE = re.compile(r"\{\{[<%].*?[>%]\}\}", re.S)
_WORD = re.compile(r"[^\W_]+(?:['’.-][^\W_]+)*")


def _words(text: str) -> int:
    for pattern in _DROP:
        text = pattern.sub(" ", text)
    text = _INLINE_MATHS.sub(" M ", text)
    for pattern in _MARKUP:
        text = pattern.sub(" ", text)
    text = _SHORTCODE.sub(" ", _VALUE.sub(" N ", text))
    return len(_WORD.findall(text))


def stretches(text: str) -> list[tuple[int, int]]:
    """``(words, line)`` of each stretch of prose between figures, in reading order; ``line`` is
    where the stretch starts in ``text`` (1-based: the line the figure before it ends on). The
    article's end (its References) closes the last stretch."""
    out, start = [], 0
    bounds = [(m.start(), m.end()) for m in _FIGURE.finditer(text)] + [(len(text), len(text))]
    for lo, hi in bounds:
        out.append((_words(text[start:lo]), text.count("\n", 0, start) + 1))
        start = hi
    return out


def longest(text: str) -> tuple[int, int]:
    """``(words, line)`` of the longest stretch of prose without a figure in ``text``."""
    return max(stretches(text))


def report(posts: Path = POSTS) -> dict[str, tuple[int, int]]:
    """``{article file name: (words, line)}`` of each article's longest stretch."""
    return {p.name: longest(p.read_text(encoding="utf-8"))
            for p in sorted(posts.glob("*.md")) if p.name != "_index.md"}


def main() -> int:
    rows = report()
    for name, (words, line) in rows.items():
        flag = "" if words <= LIMIT else f"  over {LIMIT}"
        print(f"{words:6d} words from line {line:4d}  {name}{flag}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
