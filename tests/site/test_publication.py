"""The site as a publication: who wrote it, what a reader may reuse, how to cite it, how to
follow it, how it previews when shared, where a lost reader lands, and a gallery that sends
each figure back to the article that explains it. Read from what the build wrote."""

from __future__ import annotations

import hashlib
import html
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from headspace_site.demos import REGISTRY

ROOT = Path(__file__).resolve().parents[2]
PUBLIC = ROOT / "site" / "public"
MODELS = ROOT / "py" / "src" / "headspace" / "models"


def page(path: str) -> str:
    file = PUBLIC / path.strip("/") / "index.html" if not path.endswith(".html") else PUBLIC / path.strip("/")
    if not file.exists():
        pytest.fail(f"{path} was not built ({file} is missing); run scripts/build")
    return file.read_text(encoding="utf-8")


def articles() -> list[str]:
    return sorted(p.parent.name for p in (PUBLIC / "posts").glob("*/index.html"))


def title_of(text: str) -> str:
    return html.unescape(re.search(r"<h1>(.*?)</h1>", text, re.S).group(1)).strip()


def bibtex(text: str) -> dict:
    """The one BibTeX entry in a page's "cite this" block, as {field: value} plus its key."""
    (entry,) = re.findall(r'<pre class="?bibtex"?><code>(.*?)</code></pre>', text, re.S)
    entry = html.unescape(entry)
    head = re.match(r"@misc\{([\w-]+),\n", entry)
    assert head, entry
    fields = dict(re.findall(r"^\s+(\w+)\s+= \{(.*)\},?$", entry, re.M))
    assert entry.rstrip().endswith("}") and entry.count("{") == entry.count("}"), f"unbalanced braces: {entry}"
    return {"key": head.group(1), **fields}


def test_about_page_says_who_what_licence_and_how_to_cite():
    about = page("/about/")
    assert "The headspace team" in about
    assert "creativecommons.org/licenses/by/4.0/" in about and "MIT" in about
    for link in ("/use-it/", "/reference/", "/trained-models/", "/embedding/", "/gallery/"):
        assert f'href={link}' in about or f'href="{link}"' in about, f"the about page does not link {link}"
    entry = bibtex(about)
    assert entry["key"] == "headspace-about" and entry["author"] == "{The headspace team}"
    assert entry["year"].isdigit() and "url" in entry["howpublished"]


@pytest.mark.parametrize("slug", articles())
def test_every_article_has_a_byline_a_citation_and_anchored_headings(slug):
    text = page(f"/posts/{slug}/")
    assert 'class="byline"' in text or "class=byline" in text
    entry = bibtex(text)
    assert entry["key"] == f"headspace-{slug}"
    assert html.unescape(entry["title"]) == title_of(text)
    assert entry["howpublished"] == f"\\url{{/posts/{slug}/}}"  # absolute on the deploy (scripts/build passes URL)
    headings = re.findall(r'<h([23]) id="?([^" >]+)"?>(.*?)</h\1>', text, re.S)
    content = [(level, hid, body) for level, hid, body in headings if not hid.startswith("cite-")]
    assert content, "no section headings"
    for level, hid, body in content:
        assert re.search(rf'<a class="?anchor"? href="?#{re.escape(hid)}"?', body), f"h{level}#{hid} has no link to itself"
    ids = re.findall(r'\sid="?([^" >]+)', text)
    assert len(ids) == len(set(ids)), f"duplicate ids: {sorted({i for i in ids if ids.count(i) > 1})}"


def test_the_feed_lists_every_article():
    root = ET.parse(PUBLIC / "index.xml").getroot()
    items = root.findall("./channel/item")
    links = sorted(i.findtext("link") for i in items)
    assert links == sorted(f"/posts/{slug}/" for slug in articles())
    for item in items:
        slug = item.findtext("link").strip("/").split("/")[-1]
        assert item.findtext("title") == title_of(page(f"/posts/{slug}/"))
        assert item.findtext("description") and item.findtext("pubDate")
    assert 'type="application/rss+xml"' in page("/posts/polariser/") or "type=application/rss+xml" in page("/posts/polariser/")


@pytest.mark.parametrize("path", ["/", "/about/", "/gallery/", "/trained-models/", "/posts/polariser/",
                                  "/posts/measuring-composition/"])
def test_shared_pages_preview(path):
    text = page(path)
    meta = dict(re.findall(r'<meta (?:property|name)="?([\w:]+)"? content="([^"]*)"', text))
    for key in ("og:title", "og:description", "og:url", "og:image", "twitter:card"):
        assert meta.get(key), f"{path}: no {key}"
    assert meta["og:url"].endswith(path)
    assert meta["og:type"] == ("article" if path.startswith("/posts/") else "website")
    image = PUBLIC / meta["og:image"].split("/", 3)[-1].lstrip("/") if "://" in meta["og:image"] else PUBLIC / meta["og:image"].lstrip("/")
    assert image.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(image.read_bytes()[16:20], "big"), int.from_bytes(image.read_bytes()[20:24], "big")
    assert (width, height) == (int(meta["og:image:width"]), int(meta["og:image:height"])) == (1200, 630)


def test_a_lost_reader_lands_on_a_page_that_helps():
    text = (PUBLIC / "404.html").read_text(encoding="utf-8")
    assert "No page here" in text
    assert re.search(r'href="?/"?[ >]', text) and re.search(r'href="?/gallery/"?[ >]', text)


def test_the_gallery_groups_every_figure_under_the_article_that_explains_it():
    gallery = page("/gallery/")
    order = [html.unescape(t) for t in re.findall(r'<h2 id="?[^" >]+"?><a href="?/posts/[^" >]+"?>(.*?)</a></h2>', gallery)]
    assert order, "no article groups"
    figures = re.findall(r'<figure class="?demo"? id="?([^" >]+)"? data-demo="?([^" >]+)"?', gallery)
    names = [n for _, n in figures]
    assert sorted(names) == sorted(REGISTRY), "every registry demo exactly once"
    first_home: dict[str, str] = {}
    for slug in articles():
        for name in re.findall(r'<figure class="?demo"? id="?[^" >]+"? data-demo="?([^" >]+)"?', page(f"/posts/{slug}/")):
            first_home.setdefault(name, None)
    # Each group: the article's figures it places first (in reading order), each with the article's
    # caption and a link to the figure in the article.
    groups = re.split(r'<h2 id="?[^" >]+"?><a href="?(/posts/[^" >]+)"?>', gallery)[1:]
    seen: set[str] = set()
    for href, body in zip(groups[::2], groups[1::2]):
        article = page(href)
        for fid, name, context in re.findall(
                r'<figure class="?demo"? id="?([^" >]+)"? data-demo="?([^" >]+)"?.*?In context: <a href="?([^" >]+)"?', body, re.S):
            assert name not in seen
            seen.add(name)
            path, anchor = context.split("#")
            assert path == href
            there = re.search(rf'<figure class="?demo"? id="?{re.escape(anchor)}"? data-demo="?{re.escape(name)}"?(.*?)</figure>', article, re.S)
            assert there, f"gallery links {name} to {context}, which is not that figure"
            caption_there = re.search(r"<figcaption>(.*?)</figcaption>", there.group(1), re.S)
            caption_here = re.search(rf'id="?{re.escape(fid)}"?.*?<figcaption>(.*?)</figcaption>', body, re.S)
            if caption_there:
                assert caption_here and caption_here.group(1) == caption_there.group(1), f"{name}: caption differs"
    assert seen, "no figure links back to its article"
    assert seen | set(re.findall(r'data-demo="?([^" >]+)"?', gallery.split('id="not-in-an-article"')[-1] if "not-in-an-article" in gallery else "")) >= set(REGISTRY)


def test_the_models_page_lists_every_file_with_its_hash():
    text = page("/trained-models/")
    manifest = json.loads((MODELS / "manifest.json").read_text())
    for name, model in manifest["models"].items():
        config = json.loads((MODELS / name / "config.json").read_text())
        assert f'id="model-{name}"' in text or f"id=model-{name}" in text
        assert f"{config['n_layers']} × {config['n_heads']}" in text
        for file, facts in model["files"].items():
            served = PUBLIC / "models" / name / file
            assert hashlib.sha256(served.read_bytes()).hexdigest() == facts["sha256"]
            assert re.search(rf'href="?/models/{re.escape(name)}/{re.escape(file)}"?', text), f"no link to {name}/{file}"
            assert facts["sha256"] in text
