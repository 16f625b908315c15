"""Captions say what the figure shows, in words that stay true on every screen.

Convention: a caption (and prose) names a figure's control with ``{{< control "param" >}}`` and an
output with ``{{< output "key" >}}`` (the ``demo=`` form outside a caption). Both print the label
the figure itself shows, in ``<span class="ref-control|ref-output" data-ref="demo:name">``, and the
build fails on an unknown name. On the built site (every article, the gallery, the embed pages):

- every control and output a caption names exists in that very figure, under that very label;
- a caption never quotes a control's label by hand (it would drift when the label changes);
- no caption names a mark by a colour word (a colour scheme changes "the black arrow" to white;
  a reader who does not see colour cannot use it) unless the figure's own legend, colour bar or
  annotations say that word;
- every output a figure shows says what it is (a label and a line of help);
- no article names an output by its Python key in code (``max_output_change``): the reader never
  sees the key, only its label.
"""

from __future__ import annotations

import functools
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PUBLIC = ROOT / "site" / "public"
CONTENT = ROOT / "site" / "content"
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
#: Colour words a caption may not use for a mark unless the figure's legend says them. "Light" and
#: "dark" are left out: in these articles light is the polarisers' light.
COLOURS = ("black", "white", "grey", "gray", "red", "blue", "green", "orange", "purple", "yellow", "pink",
           "brown", "cyan", "magenta", "violet", "teal", "faint", "bright")


class Node:
    def __init__(self, tag, attrs, parent=None):
        self.tag, self.attrs, self.parent, self.children = tag, dict(attrs), parent, []

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def iter(self):
        for c in self.children:
            if isinstance(c, Node):
                yield c
                yield from c.iter()

    def find_all(self, test):
        return [n for n in self.iter() if test(n)]

    def classes(self) -> list[str]:
        return (self.attrs.get("class") or "").split()


class Tree(HTMLParser):
    """A page as a tree of nodes (enough of HTML for Hugo's minified output)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = self.node = Node("#root", {})

    def handle_starttag(self, tag, attrs):
        node = Node(tag, attrs, self.node)
        self.node.children.append(node)
        if tag not in VOID:
            self.node = node

    def handle_startendtag(self, tag, attrs):
        self.node.children.append(Node(tag, attrs, self.node))

    def handle_endtag(self, tag):
        node = self.node
        while node is not self.root and node.tag != tag:
            node = node.parent
        if node is not self.root:
            self.node = node.parent

    def handle_data(self, data):
        self.node.children.append(data)


@functools.cache  # the module's tests read the same pages; each is parsed once (they only read the tree)
def parse(path: Path) -> Node:
    tree = Tree()
    tree.feed(path.read_text(encoding="utf-8"))
    return tree.root


def built_pages() -> list[Path]:
    if not (PUBLIC / "index.html").exists():
        pytest.fail("site/public is not built; run scripts/build")
    return sorted(p for p in PUBLIC.rglob("index.html") if "/reference/" not in str(p))


@pytest.fixture(scope="module")
def demos_data() -> dict:
    return json.loads((ROOT / "site" / "data" / "demos.json").read_text())


def figures(page: Node) -> list[Node]:
    return page.find_all(lambda n: n.tag == "figure" and "demo" in n.classes())


def control_labels(fig: Node) -> dict[str, str]:
    """{parameter name: the label the figure shows for it}."""
    labels = {n.attrs["for"]: n.text().strip() for n in fig.find_all(lambda n: n.tag == "label" and "for" in n.attrs)}
    out = {}
    for el in fig.find_all(lambda n: "name" in n.attrs and n.tag in ("input", "select", "fieldset")):
        if el.tag == "fieldset":
            out[el.attrs["name"]] = next(n for n in el.iter() if n.tag == "legend").text().strip()
        else:
            out[el.attrs["name"]] = labels[el.attrs["id"]]
    return out


def output_labels(fig: Node) -> dict[str, str]:
    """{output key: the label the figure shows above or beside it}."""
    out = {}
    for o in fig.find_all(lambda n: n.tag == "output" and "data-output" in n.attrs):
        out[o.attrs["data-output"]] = next(n for n in fig.iter() if n.attrs.get("id") == o.attrs["aria-labelledby"]).text()
    return out


def caption(fig: Node) -> Node | None:
    return next((n for n in fig.children if isinstance(n, Node) and n.tag == "figcaption"), None)


def legend_words(demos_data: dict, fig: Node, page: Path) -> str:
    """Everything the figure itself writes as a key to its marks: legend entries, colour bar titles,
    annotations and titles of its prerendered figure."""
    script = next(n for n in fig.iter() if n.tag == "script" and n.attrs.get("data-role") == "prerender")
    figure = json.loads(script.text())["figure"]
    words = []
    for trace in figure["data"]:
        if trace.get("showlegend", True) and trace.get("name"):
            words.append(trace["name"])
        bar = (trace.get("colorbar") or {}).get("title")
        words.append(bar.get("text", "") if isinstance(bar, dict) else bar or "")
    for note in figure["layout"].get("annotations", []):
        words.append(note.get("text") or "")
    title = figure["layout"].get("title")
    words.append(title.get("text", "") if isinstance(title, dict) else title or "")
    return " ".join(words).lower()


def prose(node: Node) -> str:
    """A caption's own words: without its maths and the figure's labels it quotes (a control
    labelled "Faint direction ε" names a control, not a mark)."""
    return " ".join(prose(n) if isinstance(n, Node) else n for n in node.children
                    if not (isinstance(n, Node) and {"katex", "ref-control", "ref-output"} & set(n.classes())))


def all_figures():
    for path in built_pages():
        page = parse(path)
        for fig in figures(page):
            yield path, fig


def test_named_controls_and_outputs_exist_in_their_figure():
    checked = 0
    for path, fig in all_figures():
        cap = caption(fig)
        if cap is None:
            continue
        name = fig.attrs["data-demo"]
        controls, outputs = control_labels(fig), output_labels(fig)
        for ref in cap.find_all(lambda n: n.tag == "span" and {"ref-control", "ref-output"} & set(n.classes())):
            demo, key = ref.attrs["data-ref"].split(":", 1)
            where = f"{path.relative_to(PUBLIC)} #{fig.attrs['id']}"
            assert demo == name, f"{where}: the caption names {key!r} of another demo, {demo!r}"
            shown = controls if "ref-control" in ref.classes() else outputs
            kind = "control" if shown is controls else "output"
            assert key in shown, f"{where}: the caption names {kind} {key!r}; the figure has {sorted(shown)}"
            assert ref.text() == shown[key], f"{where}: {kind} {key!r} is labelled {shown[key]!r}, " \
                                             f"the caption says {ref.text()!r}"
            checked += 1
    assert checked >= 40, f"only {checked} named controls and outputs: is the convention used?"


def test_captions_do_not_quote_control_labels_by_hand():
    for path, fig in all_figures():
        cap = caption(fig)
        if cap is None:
            continue
        text = cap.text()
        for label in control_labels(fig).values():
            for quoted in (f"“{label}”", f'"{label}"'):
                assert quoted not in text, f"{path.relative_to(PUBLIC)} #{fig.attrs['id']}: name the control " \
                                           f"{label!r} with the control shortcode"


def test_captions_name_no_colour_the_figure_does_not(demos_data):
    seen = 0
    for path, fig in all_figures():
        cap = caption(fig)
        if cap is None:
            continue
        seen += 1
        text = prose(cap).lower()
        key = legend_words(demos_data, fig, path)
        for word in COLOURS:
            if re.search(rf"\b{word}\b", text) and not re.search(rf"\b{word}\b", key):
                pytest.fail(f"{path.relative_to(PUBLIC)} #{fig.attrs['id']}: the caption says {word!r}, which "
                            f"the figure's legend does not; name the mark (the dashed line, the arrow ...)")
    assert seen >= 20


def test_every_output_says_what_it_is():
    for path, fig in all_figures():
        for o in fig.find_all(lambda n: n.tag == "output" and "data-output" in n.attrs):
            where = f"{path.relative_to(PUBLIC)} #{fig.attrs['id']} {o.attrs['data-output']}"
            label = output_labels(fig)[o.attrs["data-output"]]
            assert label and "_" not in label.split()[-1] or label.startswith(("W_", "frobenius", "svd_bound")), where
            helps = [n for n in fig.iter() if n.attrs.get("id") == o.attrs["aria-describedby"]]
            assert helps and len(helps[0].text()) > 15, f"{where}: no description of what it is"


def test_articles_name_outputs_by_their_labels(demos_data):
    """An output's key in code (`crosstalk`) is not what the reader sees under the figure."""
    from headspace.composition import METRICS
    keys = {k for d in demos_data["registry"].values() for k in d["outputs"] if "_" in k} - set(METRICS)
    for path in sorted((CONTENT / "posts").glob("*.md")):
        text = path.read_text(encoding="utf-8")
        for key in keys:
            assert f"`{key}`" not in text, f"{path.name}: `{key}` is an output's key; write {{{{< output ... >}}}}"


#: Where a panel sits, said by its side: true at 1280 px, false on a phone, where panels stack.
SIDE = re.compile(r"\b(?:(?:left|right)[- ](?:hand )?panel|panel on the (?:left|right)|on the (?:left|right)\b(?! by)"
                  r"|(?:left|right) of the (?:next |previous )?figure|(?:top|bottom) (?:left|right)\b)", re.I)
_CAPTION = re.compile(r"\{\{<\s*demo\b[^>]*[^/]>\}\}(.*?)\{\{<\s*/demo\s*>\}\}", re.S)


def side_words(text: str) -> list[str]:
    """The phrases of ``text`` that place a panel by its side of the figure.

    >>> side_words("On the left, the points move; the right panel stays. A matrix on the left by A.")
    ['On the left', 'right panel']
    """
    return [m.group(0) for m in SIDE.finditer(" ".join(text.split()))]


@pytest.mark.parametrize("path", sorted((CONTENT / "posts").glob("*.md")), ids=lambda p: p.name)
def test_no_panel_named_by_its_side(path):
    """Captions and prose name a figure's panels by their titles ("in the panel 'output: stays put'"),
    never by left or right: at 390 px the panels stack (issue 49, point 4)."""
    text = re.sub(r"\$\$.*?\$\$|\$[^$\n]+\$", " ", path.read_text(encoding="utf-8"), flags=re.S)
    captions = " ".join(_CAPTION.findall(text))
    assert side_words(captions) == [], f"{path.name}: a caption places a panel by its side"
    prose = re.findall(r"[^.]*\b(?:panel|figure)\b[^.]*\.", _CAPTION.sub(" ", text))
    assert [w for s in prose for w in side_words(s)] == [], f"{path.name}: prose places a panel by its side"
