"""Markdown of comments and text posts as safe HTML: a small subset, never raw HTML.

Two layers, so that one mistake is not enough for a script to run: markdown-it-py (the
CommonMark preset with raw HTML off, so `<script>` is text) makes only links of our three
schemes, and nh3 (Ammonia) then keeps only the subset's tags and attributes, only http,
https and mailto addresses (no relative ones), and puts rel="nofollow ugc noopener" on
every link. Images are not made (`![alt](src)` reads as "!" and a link to the picture):
a picture would load from anywhere on each view and track the readers.

The subset: paragraphs and line breaks, emphasis, inline code and code blocks, lists,
block quotes, links and bare addresses (linkify). Headings and rules are left as text:
a comment shouting in <h1> belongs nowhere on the page. HTML entities are text too
(`&lt;` shows as typed): what a reader sees is what the writer typed, and no payload
written in entities comes out as the markup it spells.
"""

from __future__ import annotations

import functools
import re

import nh3
from markdown_it import MarkdownIt
from markupsafe import Markup

SCHEMES = frozenset({"http", "https", "mailto"})
LINK_REL = "nofollow ugc noopener"
TAGS = frozenset({"p", "br", "em", "strong", "code", "pre", "ul", "ol", "li", "blockquote", "a"})
ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}}
# Rendered texts kept per process: a thread page renders up to a few hundred comments,
# each ~25-60 us; see render().
CACHE_SIZE = 2048
# Longer texts are rendered each time rather than kept (the cache holds short ones).
CACHE_MAX_CHARS = 2000


def _link_allowed(url: str) -> bool:
    """markdown-it's link check: an absolute http(s) or mailto address, nothing else (its
    own check only refuses javascript:, vbscript:, file: and most data:)."""
    scheme, colon, _ = url.partition(":")
    return bool(colon) and scheme.lower() in SCHEMES


def _parser() -> MarkdownIt:
    md = MarkdownIt(
        "commonmark", {"html": False, "linkify": True, "typographer": False, "breaks": True}
    )
    md.enable("linkify")
    md.disable(["image", "heading", "lheading", "hr", "html_block", "html_inline", "entity"])
    md.validateLink = _link_allowed  # type: ignore[method-assign]
    return md


_MD = _parser()
_CLEANER = nh3.Cleaner(
    tags=set(TAGS),
    attributes={tag: set(names) for tag, names in ATTRIBUTES.items()},
    url_schemes=set(SCHEMES),
    url_relative="deny",
    link_rel=LINK_REL,
    strip_comments=True,
)


def render(text: str) -> Markup:
    """`text` (Markdown) as sanitised HTML, safe to put in a page as is."""
    if len(text) > CACHE_MAX_CHARS:
        return Markup(_render(text))  # noqa: S704 (sanitised by nh3)
    return Markup(_render_kept(text))  # noqa: S704 (sanitised by nh3)


def _render(text: str) -> str:
    return _quotes_escaped(_CLEANER.clean(_MD.render(text)).strip())


# A tag as nh3 writes one: every attribute value in double quotes, with no '"' inside.
_TAG = re.compile(r'(<[^>"]*(?:"[^"]*"[^>"]*)*>)')


def _quotes_escaped(html_text: str) -> str:
    """Quotes in text escaped as the rest of the pages escape them (&quot; and &#x27;):
    nh3 writes them bare between tags, harmless there, but a test of the served bytes,
    or a template that put this in an attribute, could not tell them apart."""
    parts = _TAG.split(html_text)
    for i in range(0, len(parts), 2):
        parts[i] = parts[i].replace('"', "&quot;").replace("'", "&#x27;")
    return "".join(parts)


_render_kept = functools.lru_cache(maxsize=CACHE_SIZE)(_render)


def clear() -> None:
    _render_kept.cache_clear()
