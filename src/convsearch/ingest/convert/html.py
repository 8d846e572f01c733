"""HTML to blocks: the page's main text without its navigation, headings h1–h6 kept with their levels.

The walk is done by the parser, not by Python: every block element gets a marker text node before and after it
(headings and ``<pre>`` a marker that says so, table cells a cell marker), then one ``text()`` call returns the
whole page and a split on the markers yields the blocks. Python touches each block element once and each block
once, never each character.
"""

from __future__ import annotations

import re

from selectolax.lexbor import LexborHTMLParser, LexborNode

from ..encoding import decode
from ..types import Converted, ConvertError
from ._text import Blocks, collapse, preformatted

# Markers (control characters removed from the page before parsing, so they only come from us).
_BLOCK, _CELL, _HEAD, _PRE = "\x1e", "\x1f", "\x11", "\x12"
_OURS = re.compile("[\x11\x12\x1e\x1f]")

_DROP_TAGS = ["script", "style", "noscript", "template", "nav", "aside", "form", "button", "select", "svg",
              "iframe", "object", "canvas", "dialog", "input", "textarea"]
# class/id tokens and roles that say "navigation, not content" (DocBook, Sphinx, common site themes)
_NAV_TOKENS = ("nav", "navbar", "navheader", "navfooter", "navigation", "breadcrumb", "breadcrumbs", "menu",
               "sidebar", "sphinxsidebar", "skip-link", "footer", "header", "related", "toc", "pagination")
_NAV_IDS = ("nav", "navbar", "navigation", "menu", "sidebar", "footer", "header", "toc")
_NAV_ROLES = ("navigation", "banner", "contentinfo", "search", "complementary")
# Containers only, and one selector list: lexbor tests every element against every selector, so each token
# costs a pass (the list is kept to what real pages use). headerlink is Sphinx's "¶" anchor after a heading,
# permalink the Apache manual's.
_CONTAINERS = "div, ul, ol, dl, table, section, nav, p"
_NAV_SELECTOR = ", ".join(
    [f":is({_CONTAINERS}):is(" + ", ".join([f'[class~="{t}"]' for t in _NAV_TOKENS]
                                            + [f'[id="{t}"]' for t in _NAV_IDS]
                                            + [f'[role="{r}"]' for r in _NAV_ROLES]) + ")",
     "a.headerlink, a.permalink"] + _DROP_TAGS)
_ROOTS = ("main", '[role="main"]', "article", "div.body")
_ROOTS_SELECTOR = ", ".join(_ROOTS)
_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
# Lists and tables need no markers of their own: their items and rows have them, and text never sits directly
# inside <ul>/<table> (each insert is a Python call: the fewer, the faster).
_BLOCK_TAGS = frozenset({"p", "div", "li", "dt", "dd", "blockquote", "tr", "section", "article", "main", "figure",
                         "figcaption", "caption", "hr", "address", "details", "summary", "center", "header",
                         "footer"})
_LEVELS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_MARKED = frozenset(_BLOCK_TAGS | set(_LEVELS) | {"td", "th", "br", "pre"})
_META_CHARSET = re.compile(rb"""<meta[^>]{0,200}?charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.IGNORECASE)
_XML_ENCODING = re.compile(rb"""^<\?xml[^>]{0,100}?encoding\s*=\s*["']([A-Za-z0-9_.:-]+)""")


def declared_charset(raw: bytes) -> str | None:
    """The charset a page declares in its first 4 KB (``<meta charset>``, http-equiv, or the XML declaration)."""
    head = raw[:4096]
    m = _META_CHARSET.search(head) or _XML_ENCODING.search(head)
    return m.group(1).decode("ascii") if m else None


def convert_html(raw: bytes, path: str) -> Converted:
    html = decode(raw, path, declared=declared_charset(raw))
    if "\x1e" in html or "\x1f" in html or "\x11" in html or "\x12" in html:  # str.find: far faster than a regex
        html = _OURS.sub(" ", html)
    tree = LexborHTMLParser(html)
    title = _text_of(tree.css_first("title"))
    lang = _lang(tree)
    body = tree.body
    if body is None:
        raise ConvertError(path, "the file is empty")
    root = _main(body)
    for node in root.css(_NAV_SELECTOR):
        node.decompose()
    for node in root.css("header, footer"):  # a page's banner goes; an article's own header with its title stays
        if node.css_first("h1, h2, h3, h4, h5, h6") is None:
            node.decompose()
    _mark(root)
    blocks = Blocks()
    for seg in (root.text(deep=True) or "").split(_BLOCK):
        if not seg or seg.isspace():
            continue
        head = seg[0]
        if head == _HEAD:
            blocks.add(collapse(seg[2:].replace(_CELL, " ")), int(seg[1]))
        elif head == _PRE:
            blocks.add(preformatted(seg[1:].replace(_CELL, " ")))
        elif _CELL in seg:
            cells = (collapse(c) for c in seg.split(_CELL))
            blocks.add(" | ".join(c for c in cells if c))
        else:
            blocks.add(collapse(seg))
    text, headings = blocks.build()
    if not title and headings:
        first_h1 = next((h for h in headings if h.level == 1), headings[0])
        title = first_h1.text
    meta = {"title": title} if title else {}
    return Converted(text=text, title=title[:500], headings=headings, lang=lang, kind="html", metadata=meta)


def _main(body: LexborNode) -> LexborNode:
    """The page's main container: the first ``main``, else ``[role=main]``, else the only ``article``, else
    ``div.body`` (Sphinx), else the body. One pass over the page finds every candidate (a pass costs about as much
    as parsing a tenth of the page); each rule then picks among those few, in document order."""
    found = body.css(_ROOTS_SELECTOR)
    if not found:
        return body
    for sel in _ROOTS:
        these = [n for n in found if n.css_matches(sel)]
        if len(these) == 1 or (these and sel != "article"):
            return these[0]
    return body


def _mark(root: LexborNode) -> None:
    """Marker text nodes around every block (one walk over the elements; the tag picks the marker). The walk is
    ``traverse`` with the tag tested in Python: it visits what a selector list of those tags would select, for
    about 60% of that selector pass (lexbor tests each element against each of its 15 tag selectors)."""
    levels, blocks, marked = _LEVELS, _BLOCK_TAGS, _MARKED
    for node in [n for n in root.traverse() if n.tag in marked]:  # collected first: the inserts add nodes
        tag = node.tag or ""
        if tag in blocks:
            node.insert_before(_BLOCK)
            node.insert_after(_BLOCK)
        elif tag == "td" or tag == "th":
            node.insert_before(_CELL)
        elif tag == "br":
            node.insert_before("\n")
        elif tag == "pre":
            node.insert_before(_BLOCK + _PRE)
            node.insert_after(_BLOCK)
        else:
            node.insert_before(f"{_BLOCK}{_HEAD}{levels[tag]}")
            node.insert_after(_BLOCK)


def _text_of(node: LexborNode | None) -> str:
    return collapse(node.text(deep=True)) if node is not None else ""


def _lang(tree: LexborHTMLParser) -> str | None:
    node = tree.css_first("html")
    if node is None:
        return None
    attrs = node.attributes
    lang = attrs.get("lang") or attrs.get("xml:lang")
    return lang.strip() or None if lang else None
