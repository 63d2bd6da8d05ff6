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

Cost, whatever the text: markdown-it-py is linear but costly on some shapes (10,000
characters of `[<` spend ~110 ms scanning link labels; 3,000 lines of `x.com` ~250 ms
linkifying, partly quadratic), so a parse is given a budget of BUDGET_SECONDS of its
thread's CPU time, checked from hooks the parser calls as it goes (each inline rule
chain, each block line, each link, each linkify test). Past it, the text is shown as
escaped plain text with its line breaks: only a text made to be slow comes to that,
an ordinary 20,000-character post takes ~15 ms. And each rendered text is kept, in
each process, in a content-addressed cache (articles.caches "markdown": keyed by a BLAKE2b
digest of the text, so never stale) bounded by the HTML it holds (CACHE_CHARS, ~32 MB),
not by text length: a feed or a thread read again renders nothing. The HTML is not
stored in Redis beside the text: a second copy of every text there would cost memory
per article, for a render that the cache and the budget already bound.
"""

from __future__ import annotations

import gc
import hashlib
import html
import math
import re
import threading
import time
from typing import Any

import nh3
from markdown_it import MarkdownIt
from markupsafe import Markup

from articles.caches import Cache, Kind

SCHEMES = frozenset({"http", "https", "mailto"})
LINK_REL = "nofollow ugc noopener"
TAGS = frozenset({"p", "br", "em", "strong", "code", "pre", "ul", "ol", "li", "blockquote", "a"})
ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}}
# The CPU one text's parse may take before it falls back to plain text: ~2x what the
# longest ordinary text (20,000 characters of prose with some markup) takes.
BUDGET_SECONDS = 0.030
# Hooks called often (once per inline token or block line) read the clock every
# CHECK_EVERY calls: reading a thread's CPU clock is a system call (~1 us).
CHECK_EVERY = 32
# The HTML kept per process (characters, ~bytes): ~1 KB for a typical comment, at most
# ~100 KB for a 20,000-character text.
CACHE_CHARS = 32 * 1024 * 1024
_ENTRY_OVERHEAD = 200  # the digest, the str header and the cache's links


class _OverBudget(Exception):
    """The parse of one text has spent its budget."""


class _Clock(threading.local):
    deadline = math.inf  # thread CPU time; none outside _render()
    calls = 0


_clock = _Clock()


def _spend(every: int = 1) -> None:
    """Raise _OverBudget once this thread's parse is past its deadline (read every
    `every` calls)."""
    clock = _clock
    clock.calls += 1
    if clock.calls % every == 0 and time.thread_time() > clock.deadline:
        raise _OverBudget


def _link_allowed(url: str) -> bool:
    """markdown-it's link check: an absolute http(s) or mailto address, nothing else (its
    own check only refuses javascript:, vbscript:, file: and most data:). Called once for
    each link made, so it spends the budget too."""
    _spend()
    scheme, colon, _ = url.partition(":")
    return bool(colon) and scheme.lower() in SCHEMES


def _budgeted_linkify(md: MarkdownIt) -> None:
    """Make linkify-it's test of each text token (the core linkify pass) spend the budget."""
    linkify = md.linkify
    assert linkify is not None  # linkify-it-py is a requirement
    test = linkify.test

    def budgeted_test(text: str) -> bool:
        _spend()
        return bool(test(text))

    linkify.test = budgeted_test


def _inline_budget(state: Any, silent: bool) -> bool:
    """First inline rule: runs at each token of the inline parse (and of its link-label
    scans), matches nothing."""
    _spend(CHECK_EVERY)
    return False


# A run of `*` or `_` longer than this is text: emphasis needs at most 3, and the emphasis
# rule makes one token per character of a run, 20,000 of them in one call the budget could
# not interrupt (~35-100 ms with the garbage collector's passes over them).
RUN_MAX = 32
_LONG_RUN = re.compile(rf"\*{{{RUN_MAX + 1},}}|_{{{RUN_MAX + 1},}}")


def _long_run_as_text(state: Any, silent: bool) -> bool:
    """Inline rule before emphasis: a run longer than RUN_MAX is taken as text."""
    run = _LONG_RUN.match(state.src, state.pos, state.posMax)
    if run is None:
        return False
    if not silent:
        state.pending += run.group()
    state.pos = run.end()
    return True


def _block_budget(state: Any, start_line: int, end_line: int, silent: bool) -> bool:
    """First block rule: runs at each block's first line, matches nothing."""
    _spend(CHECK_EVERY)
    return False


def _after_inline_budget(state: Any) -> None:
    """Between the post-inline passes (emphasis pairing and the like), each linear but
    up to ~10 ms on 20,000 characters of delimiters: once per pass and inline block."""
    _spend()


def _parser() -> MarkdownIt:
    md = MarkdownIt(
        "commonmark", {"html": False, "linkify": True, "typographer": False, "breaks": True}
    )
    md.enable("linkify")
    _budgeted_linkify(md)
    md.disable(["image", "heading", "lheading", "hr", "html_block", "html_inline", "entity"])
    md.inline.ruler.before("text", "budget", _inline_budget)
    md.inline.ruler.before("emphasis", "long_runs", _long_run_as_text)
    for name in ("balance_pairs", "emphasis", "fragments_join"):
        md.inline.ruler2.before(name, f"budget_{name}", _after_inline_budget)
    md.block.ruler.before("code", "budget", _block_budget)
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

# A process's first parse compiles what markdown-it, linkify-it and nh3 make on first use
# (~30 ms of CPU for linkify-it's patterns alone, the whole budget; then ~8 ms more than a
# warm parse of 40 paragraphs): done here, at import, outside any budget, else the first
# text a process renders could be left as plain text (and kept so).
_CLEANER.clean(
    _MD.render(
        "Some *emphasis*, **strong**, `code`, a [link](https://example.org/x), "
        "https://example.com/y, www.example.com and me@example.org.\n\n"
        "> a quote\n\n- a list\n- of two\n\n1. one\n\n```\ncode\n```\n"
    )
)

_kept: Cache[bytes, str] = Cache(
    "markdown", Kind.CONTENT, entries=CACHE_CHARS // _ENTRY_OVERHEAD, max_bytes=CACHE_CHARS
)
# The texts being rendered now, each by one thread; another thread that wants the same
# text waits for it (a feed's first readers all want the same 50 texts at once).
_making: dict[bytes, threading.Event] = {}
WAIT_SECONDS = 5.0
_lock = threading.Lock()


def render(text: str) -> Markup:
    """`text` (Markdown) as sanitised HTML, safe to put in a page as is."""
    key = hashlib.blake2b(text.encode(), digest_size=16).digest()
    found = _kept.get(key)
    if found is not None:
        return Markup(found)  # noqa: S704 (sanitised by nh3)
    with _lock:
        making = _making.get(key)
        if making is None:
            _making[key] = threading.Event()
    if making is not None:
        # The other thread's render is bounded (its budget is CPU time: under load it
        # takes longer by the clock); should it fail, this one renders too.
        making.wait(timeout=WAIT_SECONDS)
        found = _kept.get(key)
        return Markup(found if found is not None else _render(text))  # noqa: S704
    try:
        made = _render(text)
        _kept.put(key, made, size=len(made) + _ENTRY_OVERHEAD)
    finally:
        with _lock:
            _making.pop(key).set()
    return Markup(made)  # noqa: S704 (sanitised by nh3)


def _render(text: str) -> str:
    """The HTML of `text`, or of its plain-text form once its parse is over budget. A
    parse during which the garbage collector went through an older generation is given
    one more budget: the collection is this thread's CPU (its time is the heap's, tens of
    milliseconds in a large process, not the text's), and the plain text would be kept."""
    for last in (False, True):
        _clock.deadline = time.thread_time() + BUDGET_SECONDS
        _clock.calls = 0
        collected = _older_collections()
        try:
            made = _MD.render(text)
            break
        except _OverBudget:
            if last or _older_collections() == collected:
                made = _plain(text)
                break
        finally:
            _clock.deadline = math.inf
    return _quotes_escaped(_CLEANER.clean(made).strip())


def _older_collections() -> int:
    """How many collections of the garbage collector's two older generations ran so far."""
    stats = gc.get_stats()
    return int(stats[1]["collections"]) + int(stats[2]["collections"])


_PARAGRAPHS = re.compile(r"\n[ \t]*\n\s*")
_LINES = re.compile(r"\r\n?|\n")


def _plain(text: str) -> str:
    """`text` as escaped text: blank lines part paragraphs, line breaks stay."""
    paragraphs = _PARAGRAPHS.split(_LINES.sub("\n", text).strip())
    return "".join(
        "<p>" + "<br>\n".join(html.escape(line) for line in part.split("\n")) + "</p>\n"
        for part in paragraphs
        if part
    )


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


def clear() -> None:
    """Forget every kept rendering (tests)."""
    _kept.clear()
