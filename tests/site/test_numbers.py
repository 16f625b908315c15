"""Every number an article states comes from the build (docs/contracts.md,
"Numbers in prose"): a result is printed by the ``value`` shortcode from scripts/sitebuild/values/,
never typed into the prose.

The checker reads an article's markdown and blanks out, keeping line numbers:
front matter, the References section, fenced and inline code, maths
($...$, $$...$$, \\(...\\), \\[...\\]), HTML comments and tags, shortcode calls
(so a ``value`` call, and a demo's parameters), and link URLs. Captions
between ``{{< demo >}}`` tags are prose and are checked. Every number left is
flagged except:

- small whole numbers 0 to 10 (counting and maths: "two heads", "layer 0",
  "gain 1"), unless a % follows;
- years, whole numbers from 1900 to 2099 (citations);
- a label's number, after one of LABELS ("Axiom 4", "Axioms 1 and 2",
  "section 3", "Figure 2"); "step" is not a label, because a training step
  (where a phase change starts) is a result;
- digits inside a name: after a letter, an underscore or a letter and a
  hyphen ("GPT-2", "L0H1", "W_1", "attn-only-2l"), and versions ("0.27.7").

A result inside maths is beyond the checker (a shortcode cannot run inside
maths, which Hugo typesets): state it in prose next to the formula. Constants
of the maths itself, such as $1/2$ or $\\sqrt{d}$, stay in the maths.
"""

from __future__ import annotations

import re

import pytest

from sitebuild import values
from test_content import POSTS

LABELS = ("axiom", "axioms", "section", "sections", "figure", "figures", "fig.", "table", "tables",
          "chapter", "chapters", "appendix", "equation", "equations", "eq.", "theorem", "lemma",
          "definition", "layer", "layers", "head", "heads")
SMALL = range(0, 11)
YEARS = range(1900, 2100)

VALUE = re.compile(r"\{\{[<%]\s*value\s+(.*?)\s*/?[>%]\}\}", re.S)
VALUE_KEY = re.compile(r'^(?:key\s*=\s*)?"([^"]+)"')  # the key comes first in every form
_NUM = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?"
_BLANK = [  # (what, pattern), applied in this order
    ("front matter", re.compile(r"\A(\+\+\+|---)\n.*?\n\1\n", re.S)),
    ("references", re.compile(r"^## References\b.*?(?=^## |\Z)", re.S | re.M)),
    ("fenced code", re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.S | re.M)),
    ("inline code", re.compile(r"(`+)(?!`).+?(?<!`)\1", re.S)),
    ("html comment", re.compile(r"<!--.*?-->", re.S)),
    ("shortcode", re.compile(r"\{\{[<%].*?[>%]\}\}", re.S)),
    ("escaped dollar", re.compile(r"\\\$")),
    ("display maths", re.compile(r"\$\$.+?\$\$|\\\[.+?\\\]", re.S)),
    ("inline maths", re.compile(r"\$(?:[^$\n]|\n(?!\s*\n))+?\$|\\\(.+?\\\)", re.S)),
    ("link url", re.compile(r"(?<=\])\([^)\s]*(?:\s+\"[^\"]*\")?\)|^\s*\[[^\]]+\]:\s*\S+.*$", re.M)),
    ("bare url", re.compile(r"<?https?://[^\s>)]+>?")),
    ("html tag", re.compile(r"</?[A-Za-z][^>\n]*>")),
    ("version", re.compile(r"\b\d+\.\d+\.\d+\b")),
    ("label", re.compile(r"(?:(?<![\w.])(?:" + "|".join(re.escape(w) for w in LABELS) + r")|§)\s*"
                         + _NUM + r"(?:\s*(?:,|and|or|to|–|—|-)\s*" + _NUM + r")*", re.I)),
]
NUMBER = re.compile(r"(?<![\w.])(?<![^\W\d_]-)(" + _NUM + r")((?:[ \u00a0\u202f]?%)?)")


def _blank(match: re.Match) -> str:
    return re.sub(r"[^\n]", " ", match.group(0))


def prose(text: str) -> str:
    """``text`` with everything but prose blanked to spaces (line numbers and columns kept)."""
    for _, pattern in _BLANK:
        text = pattern.sub(_blank, text)
    return text


def bare_numbers(text: str) -> list[tuple[int, str, str]]:
    """``(line, number, context)`` for every number in ``text``'s prose that should be a value."""
    found = []
    lines = text.split("\n")
    for m in NUMBER.finditer(prose(text)):
        number, pct = m.groups()
        if not pct and re.fullmatch(r"\d+", number) and (int(number) in SMALL or
                                                         len(number) == 4 and int(number) in YEARS):
            continue
        line = text.count("\n", 0, m.start()) + 1
        col = m.start() - (text.rfind("\n", 0, m.start()) + 1)
        source = lines[line - 1]
        context = " ".join((source[max(0, col - 40):col] + "[" + number + pct + "]"
                            + source[col + len(number) + len(pct):col + len(number) + 40]).split())
        found.append((line, number + pct, context))
    return found


def used_values(text: str) -> list[tuple[int, str]]:
    """``(line, key)`` of every value shortcode in ``text``."""
    used = []
    for m in VALUE.finditer(text):
        key = VALUE_KEY.search(m.group(1)).group(1)  # {{< value "k" >}} or {{< value key="k" ... >}}
        used.append((text.count("\n", 0, m.start()) + 1, key))
    return used


# -- the checker itself ------------------------------------------------------

def test_checker_flags_a_bare_number():
    assert bare_numbers("The head scores 0.736 on the task.") == [(1, "0.736", "The head scores [0.736] on the task.")]


def test_checker_passes_a_value_shortcode():
    assert bare_numbers('The head scores {{< value "measuring.peak_k_score" >}} on the task.') == []
    assert bare_numbers('It scores {{< value key="measuring.peak_k_score" digits=3 >}}.') == []


@pytest.mark.parametrize("text", [
    "+++\ntitle = \"Post 42\"\nweight = 30\n+++\n\nNothing here.",
    "Two heads in layer 0, then gain 1 and hidden unit 3.",
    "Elhage et al. (2021) and Olsson et al., 2022.",
    "Axiom 4 fails; Axioms 11 and 12 hold, as do Sections 12-14 and Figure 20 and § 15.",
    "GPT-2 and L0H1 and W_12 in attn-only-2l, on Pyodide 0.27.7.",
    "Inline maths $\\cos^2 45° = 0.5$ and display\n\n$$\nx = 0.25\n$$\n\nand \\(3.5\\) and \\[4.5\\].",
    "Maths over two lines $|\\cos(\\theta -\n\\alpha)| = 0.5$ here.",
    "Code `W[768:]` and\n\n```python\nx = 0.736\n```\n",
    "A [link](https://example.org/2304.12345) and <https://arxiv.org/abs/1910.07467>.",
    "<!-- 0.5 --> <span data-x=\"12\">text</span>",
    '{{< demo name="communication" write1=30 read1=120 >}}\nA caption.\n{{< /demo >}}',
    "Text.\n\n## References\n\n- A. B., *Journal* 27 (1973), 579–594.\n",
])
def test_checker_passes(text):
    assert bare_numbers(text) == []


@pytest.mark.parametrize("text, numbers", [
    ("A 64-dimensional head in a 768-dimensional stream.", ["64", "768"]),
    ("It fell 5% in 12 layers, from 1,000 to 1e-8 and -0.34.", ["5%", "12", "1,000", "1e-8", "0.34"]),
    ("It rises from 10 % to 90 % of the way.", ["10 %", "90 %"]),
    ('{{< demo "polarizer" >}}\nA caption that says 0.5 of the light.\n{{< /demo >}}', ["0.5"]),
    ("Axiom 1 holds with a score of 0.97, and step 790 starts it.", ["0.97", "790"]),
    ("Text.\n\n## References\n\n- 27 (1973).\n\n## Appendix\n\nIt scores 0.42.", ["0.42"]),
])
def test_checker_flags(text, numbers):
    assert [n for _, n, _ in bare_numbers(text)] == numbers


def test_checker_reports_the_line():
    text = "+++\ntitle = \"x\"\n+++\n\nFirst line.\nThen a score of\n0.736 here."
    assert bare_numbers(text) == [(7, "0.736", "[0.736] here.")]


# -- the articles ----------------------------------------------------------------

@pytest.fixture(scope="module")
def computed() -> dict:
    return values.compute_cached()  # what the build computed, unless a source changed since


@pytest.mark.parametrize("path", POSTS, ids=lambda p: p.name)
def test_prose_states_numbers_through_values(path):
    found = bare_numbers(path.read_text(encoding="utf-8"))
    report = "\n".join(f"  {path.name}:{line}: {number}  ...{context}..." for line, number, context in found)
    assert not found, (f"{len(found)} bare number(s) in prose; compute each in scripts/sitebuild/values/ and write "
                       f'{{{{< value "article.name" >}}}} (or move a constant of the maths into $...$):\n{report}')


def test_every_value_used_exists(computed):
    unknown = [f"{p.name}:{line}: {key}" for p in POSTS for line, key in used_values(p.read_text(encoding="utf-8"))
               if not (isinstance(key, str) and key.count(".") == 1 and key.split(".")[1] in computed.get(key.split(".")[0], {}))]
    assert not unknown, "value shortcodes with no value in scripts/sitebuild/values/:\n  " + "\n  ".join(unknown)


def test_every_value_is_used(computed):
    used = {key for p in POSTS for _, key in used_values(p.read_text(encoding="utf-8"))}
    unused = sorted(f"{a}.{n}" for a, vs in computed.items() for n in vs if f"{a}.{n}" not in used)
    assert not unused, "scripts/sitebuild/values/ computes values no article states; remove them:\n  " + "\n  ".join(unused)


def test_values_are_numbers_or_short_strings(computed):
    assert set(computed) == set(values.ARTICLES)
    for article, fn in values.ARTICLES.items():  # each article's function names its post, which exists
        assert (POSTS[0].parents[3] / fn.__doc__.strip()).is_file(), (article, fn.__doc__)
    for article, vs in computed.items():
        for name, v in vs.items():
            assert isinstance(v, (int, float, str)) and not isinstance(v, bool), f"{article}.{name} = {v!r}"
