"""Each listing row rendered once per (article, version, viewer state) and kept in this
process: rendering 25 rows was most of a logged-in listing's cost (~30x a bare view). The
comments of a thread page likewise (comment_row), each without its replies.

The key is the whole `Article` as read (every field, so any vote, edit or regrouping makes a
new version), whether voting is open, the viewer's own vote on it, the script prefix its
links are made under, the active language, and only two facts about the viewer: logged
in, and staff. The row
is rendered with nothing else about the request or the user in its context, so nothing
else of one viewer can land in a row another sees.
What differs per request is left as a slot and filled on every page: the CSRF field
(`csrf_input`), the page's own path (the vote form's `next`, the login link's `next=`) and
the posting time's "3 hours ago". The slots are marked with a random per-process nonce, so
no article text can fake one; what fills them is escaped the way the template escapes.

A slot is filled only if the row has it: an anonymous row has no form, so it asks for no
CSRF token, and an anonymous listing sets no csrftoken cookie whether it was rendered or
kept (articles.web.pagecache): its vote arrows are links to the log-in page, which sets
the cookie its own form needs.

Three content-addressed caches (articles.caches; keyed by all a row is made of, so never
stale): "rows" (MAX_ROWS), "comment_rows" (MAX_COMMENT_ROWS), "ages" (MAX_AGES texts).
Kept here rather than in Redis with a TTL: one MGET of a page's 25 rows (2 KB each)
measured ~100 us CPU and ~250 us wall a page, about a third of the bare view's CPU.
"""

from __future__ import annotations

import html
import re
import secrets
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import jinja2
from django.contrib.humanize.templatetags.humanize import naturaltime
from django.template.defaultfilters import urlencode
from django.urls import get_script_prefix
from django.utils import translation
from markupsafe import Markup

from articles.caches import Cache, Kind
from articles.store import clock, keys
from articles.types import Article, Comment
from articles.web import livepage

MAX_ROWS = 4096  # ~2 KB a row: ~8 MB a process at most
MAX_COMMENT_ROWS = 8192  # two entries a row (fields, identity): ~4,096 rows of 1-3 KB, ~10 MB
MAX_AGES = 8192

_NONCE = secrets.token_hex(8)
# What the row template sees instead of the per-request values. The path holds a ':' so
# its two uses come out apart: as is in an attribute, as %3A after |urlencode.
_CSRF = f"vsrowcsrf{_NONCE}x"
_AGO = f"vsrowago{_NONCE}x"
_PATH = f"vsrowpath{_NONCE}:"
_SLOTS = {
    _CSRF: "csrf",
    _AGO: "ago",
    _PATH: "path",
    urlencode(_PATH): "path_query",
}
_SPLIT = re.compile("(" + "|".join(re.escape(s) for s in _SLOTS) + ")")

# key -> the row's parts: literal text at even indexes, slot names at odd ones.
_rows: Cache[tuple[Any, ...], tuple[str, ...]] = Cache("rows", Kind.CONTENT, entries=MAX_ROWS)
# (comment, facts) -> the comment's row (its parts, as _rows', and where its slots are);
# (id(comment), facts) -> (comment, row): the same row found without hashing the comment.
_comments: Cache[tuple[Any, ...], _Row | tuple[Comment, _Row]] = Cache(
    "comment_rows", Kind.CONTENT, entries=MAX_COMMENT_ROWS
)
_ages: Cache[tuple[int, int, str | None], str] = Cache("ages", Kind.CONTENT, entries=MAX_AGES)


class _Viewer:
    """All a cached row may know of the user."""

    __slots__ = ("is_authenticated", "is_staff")

    def __init__(self, is_authenticated: bool, is_staff: bool) -> None:
        self.is_authenticated, self.is_staff = is_authenticated, is_staff


class _Here:
    """All a cached row may know of the request: a path to be filled in later."""

    @staticmethod
    def get_full_path() -> str:
        return _PATH


@jinja2.pass_context
def article_row(context: jinja2.runtime.Context, article: Article, detail: bool = False) -> Markup:
    """`articles/_article.html` for `article`, from the cache when this version is kept."""
    facts = _facts(context)
    livepage.note_row(context, article.id, bool(detail))
    now = time.time()
    is_open = article.voting_open(now)
    key = (article, is_open, *facts.viewer, bool(detail), *facts.made_under)
    parts = _rows.get(key)
    if parts is None:
        authenticated, staff, marks = facts.viewer
        parts = _render(context.environment, article, is_open, authenticated, staff, detail, marks)
        _rows.put(key, parts)
    return _filled(context, parts, lambda: ago(article, now, facts.made_under[1]))


@jinja2.pass_context
def article_rows(
    context: jinja2.runtime.Context, articles: Any, first_rank: int | None = None
) -> Markup:
    """`<li>` and article_row for each of a listing's articles, with its rank when
    `first_rank` is given (it counts from first_rank + 1): one call a listing, not a
    template loop's call a row."""
    out = []
    for index, article in enumerate(articles, 1):
        rank = "" if first_rank is None else f'<span class="rank">{first_rank + index}.</span>'
        out.append(f"<li>{rank}{article_row(context, article)}</li>")
    return Markup("".join(out))  # noqa: S704 (kept rows and a number)


class _Facts:
    """What every row of one rendering shares (its viewer's two facts, the search's marks,
    the script prefix and language, the page's path): worked out once a page, not once a
    row. Kept on the Jinja2 context of that rendering (an include has a context of its own)."""

    __slots__ = ("_csrf", "_request", "_values", "made_under", "viewer")

    def __init__(self, context: jinja2.runtime.Context) -> None:
        user = context.get("user")
        authenticated = bool(getattr(user, "is_authenticated", False))
        staff = bool(authenticated and getattr(user, "is_staff", False))
        # The words a search marks in titles (none elsewhere) are part of the row.
        self.viewer = (authenticated, staff, tuple(context.get("marks") or ()))
        self.made_under = _made_under()
        self._request = context.get("request")
        self._csrf = context.get("csrf_input", "")  # made only when str() asks (a cookie)
        self._values: dict[str, str] = {}

    def value(self, slot: str) -> str:
        """The text of a "csrf", "path" or "path_query" slot, escaped as the template
        escapes: made once a page, when a row first asks for it."""
        text = self._values.get(slot)
        if text is None:
            if slot == "csrf":
                text = str(self._csrf)
            else:
                request = self._request
                path = request.get_full_path() if request is not None else ""
                text = html.escape(path if slot == "path" else urlencode(path))
            self._values[slot] = text
        return text


_FACTS = "_articles_row_facts"


def _facts(context: jinja2.runtime.Context) -> _Facts:
    facts = getattr(context, _FACTS, None)
    if facts is None:
        facts = _Facts(context)
        setattr(context, _FACTS, facts)
    return facts


@jinja2.pass_context
def comment_row(
    context: jinja2.runtime.Context, comment: Comment, voting_open: bool, commenting_open: bool
) -> Markup:
    """`articles/_comment_row.html` (a comment's own part, not its replies) for `comment`,
    from the cache when this version is kept (see _comment_template)."""
    viewer = _CommentViewer(context.get("user"))
    row = _comment_template(
        context.environment, comment, voting_open, commenting_open, viewer, _made_under()
    )
    slots = _Slots(context)
    slots[b"ago"] = html.escape(ago_of(comment.time, time.time())).encode()
    return Markup(b"".join(row.filled(slots)).decode())  # noqa: S704 (template, escaped values)


# The context variable rendering.render() sets: where comment_nodes leaves a thread's bytes,
# to be put into the page's own once it is encoded (splice()).
SPLICE = "articles_splice"


@jinja2.pass_context
def comment_nodes(
    context: jinja2.runtime.Context,
    nodes: list[Any],
    voting_open: bool,
    commenting_open: bool,
    listed: bool = True,
) -> Markup:
    """The nested list of a thread page's comments (`comments.Node`s): each comment's row
    (comment_row's, from the cache), its shown replies, its "continue this thread" link.
    Put together here, not by a recursive macro: a macro call per comment, and filling each
    row on its own, were ~85 % of a 300-comment page's cost. This request's values (CSRF
    field, path, each comment's age) go into every row as it is put in.
    The rows are kept as UTF-8: under rendering.render() the thread's bytes are put into the
    encoded page (a mark stands in the text), so hundreds of KB are never encoded again
    (~1.5 ms a 300-comment page: a page with one non-ASCII character encodes slowly).
    `listed`: in their own <ol class="comments"> (False: the <li>s alone)."""
    env = context.environment
    viewer = _CommentViewer(context.get("user"))
    made = _made_under()
    now = time.time()
    slots = _Slots(context)
    out: list[bytes] = []

    def walk(nodes: list[Any], listed: bool = True) -> None:
        if listed:
            out.append(b'<ol class="comments">\n')
        for node in nodes:
            c = node.comment
            row = _comment_template(env, c, voting_open, commenting_open, viewer, made)
            slots[b"ago"] = html.escape(ago_of(c.time, now, made[1])).encode()
            out.extend(row.filled(slots))
            if node.children:
                walk(node.children)
            out.append(row.end)
        if listed:
            out.append(b"</ol>")

    walk(nodes, listed)
    data = b"".join(out)
    spliced = context.get(SPLICE)
    if not isinstance(spliced, dict):
        return Markup(data.decode())  # noqa: S704 (template output and escaped values)
    mark = f"<!--vsthread{_NONCE}x{len(spliced)}-->"
    spliced[mark] = data
    return Markup(mark)  # noqa: S704 (a constant of ours)


def splice(text: str, spliced: dict[str, bytes]) -> bytes:
    """A page rendered with SPLICE, encoded, with the threads comment_nodes left in
    `spliced` put in place of their marks."""
    data = text.encode()
    for mark, thread in spliced.items():
        data = data.replace(mark.encode(), thread, 1)
    return data


class _CommentViewer:
    """The facts about the viewer a comment's row is keyed by, worked out once a page."""

    __slots__ = ("authenticated", "member", "pk", "staff")

    def __init__(self, user: Any) -> None:
        self.authenticated = bool(getattr(user, "is_authenticated", False))
        self.staff = bool(self.authenticated and getattr(user, "is_staff", False))
        self.pk = user.pk if self.authenticated else None
        # A comment's `author` as the store writes it (keys.user): the viewer's own
        # comments are those whose author is this member.
        self.member = keys.user(self.pk) if isinstance(self.pk, int) and self.pk > 0 else None


def _comment_template(
    env: jinja2.Environment,
    comment: Comment,
    voting_open: bool,
    commenting_open: bool,
    viewer: _CommentViewer,
    made: tuple[str, str | None],
) -> _Row:
    """A comment's row, from the cache when this version is kept: ~0.3 ms to render, up to
    ARTICLES_COMMENT_PAGE_ROWS of them a page. Besides the comment as read (every field:
    its text, state, vote counts, flags held, the viewer's vote, `more`) and where it is
    made (script prefix, language) the key holds only whether the viewer is logged in,
    staff, its author and may still edit it, so every viewer in the same state shares it.
    The comment is looked up by identity first: hashing its 18 fields (a dataclass's hash,
    in Python, twice a look-up) was ~1.5 ms of a 300-comment page, and the thread's read
    hands out the same object for the same values (selectors.comments: "thread_comments").
    A `Comment` is frozen, so the object stands for every field; the entry holds it, so
    its id is not reused while it is kept. A comment met as a new object (a value read
    afresh, an archived thread) is looked up by its fields, as before, and then kept
    under its identity as well."""
    mine = viewer.member is not None and comment.author == viewer.member
    editable = mine and comment.editable_by(viewer.pk, clock.now())
    facts = (
        voting_open,
        commenting_open,
        viewer.authenticated,
        viewer.staff,
        mine,
        editable,
        *made,
    )
    seen = _comments.get((id(comment), *facts))
    if isinstance(seen, tuple) and seen[0] is comment:
        return seen[1]
    content = (comment, *facts)
    row = _comments.get(content)
    if not isinstance(row, _Row):
        parts = _render_parts(
            env,
            "articles/_comment_row.html",
            _Viewer(viewer.authenticated, viewer.staff),
            c=comment,
            voting_open=voting_open,
            commenting_open=commenting_open,
            mine=mine,
            editable=editable,
            ago_text=Markup(_AGO),  # noqa: S704 (a constant of ours)
        )
        more = env.get_template("articles/_comment.html").module.more_link  # type: ignore[attr-defined]
        row = _Row(parts, str(more(comment)) if comment.more else "")
        _comments.put(content, row)
    _comments.put((id(comment), *facts), (comment, row))
    return row


class _Row:
    """A kept comment row, in UTF-8: its parts (literal text at even indexes, slot names,
    as bytes, at odd ones), and what closes it after its replies (with its "continue this
    thread" link when it has replies the page leaves out)."""

    __slots__ = ("end", "parts", "slots")

    def __init__(self, parts: tuple[str, ...], more: str) -> None:
        self.parts = tuple(p.encode() for p in parts)
        self.slots = tuple(range(1, len(parts), 2))
        tail = more.strip() + "\n" if more else ""
        self.end = f"{tail}</details>\n</li>\n".encode()

    def filled(self, values: dict[bytes, bytes]) -> list[bytes]:
        """The parts with `values` in the slots."""
        parts = self.parts
        out = list(parts)
        for i in self.slots:
            out[i] = values[parts[i]]
        return out


class _Slots(dict[bytes, bytes]):
    """This request's values of the slots, escaped as the template would, in UTF-8; the
    CSRF field made only if a row asks for it (asking sets the cookie)."""

    def __init__(self, context: jinja2.runtime.Context) -> None:
        request = context.get("request")
        path = request.get_full_path() if request is not None else ""
        super().__init__(
            {
                b"path": html.escape(path).encode(),
                b"path_query": html.escape(urlencode(path)).encode(),
            }
        )
        self._context = context

    def __missing__(self, name: bytes) -> bytes:
        if name != b"csrf":
            raise KeyError(name)
        value = str(self._context.get("csrf_input", "")).encode()
        self[name] = value
        return value


def _made_under() -> tuple[str, str | None]:
    """What a row's text depends on besides its data and viewer: the script prefix its links
    are made under, and the active language its words are in."""
    return get_script_prefix(), translation.get_language()


def _filled(
    context: jinja2.runtime.Context, parts: tuple[str, ...], age: Callable[[], str]
) -> Markup:
    """A kept row with this request's values in its slots, escaped as the template would."""
    if len(parts) == 1:
        return Markup(parts[0])  # noqa: S704 (rendered by the autoescaping environment)
    # Each made only if a slot asks: the CSRF token sets a cookie once asked for.
    facts, aged = _facts(context), ""
    filled = list(parts)
    for i in range(1, len(parts), 2):
        slot = parts[i]
        if slot == "ago":
            aged = aged or html.escape(age())
            filled[i] = aged
        else:
            filled[i] = facts.value(slot)
    return Markup("".join(filled))  # noqa: S704 (template output and escaped values)


def _parts(html_text: str) -> tuple[str, ...]:
    """Rendered text split at its slots: literal text at even indexes, slot names at odd."""
    pieces = _SPLIT.split(html_text)
    return tuple(_SLOTS[p] if i % 2 else p for i, p in enumerate(pieces))


def ago(article: Article, now: float, language: str | None = None) -> str:
    """naturaltime of the posting time (~60 us for "3 days, 1 hour ago", 25 a page), kept:
    exact to the second under an hour old; older, the text is at most a minute late."""
    return ago_of(article.time, now, language)


def ago_of(posted: float, now: float, language: str | None = None) -> str:
    """ago() of any Unix time (a comment's: up to a few hundred a page); `language`: the
    active one, if the caller has it at hand (comment_nodes asks it once a page)."""
    delta = int(now - posted)
    key = (
        int(posted),
        delta if delta < 3600 else delta // 60 * 60,
        language if language is not None else translation.get_language(),
    )
    text = _ages.get(key)
    if text is None:
        text = str(naturaltime(datetime.fromtimestamp(posted, tz=UTC)))
        _ages.put(key, text)
    return text


def clear() -> None:
    _rows.clear()
    _comments.clear()
    _ages.clear()


def _render(
    env: jinja2.Environment,
    article: Article,
    is_open: bool,
    authenticated: bool,
    staff: bool,
    detail: bool,
    marks: tuple[str, ...] = (),
) -> tuple[str, ...]:
    return _render_parts(
        env,
        "articles/_article.html",
        _Viewer(authenticated, staff),
        article=article,
        marks=marks,
        voting_open=is_open,
        detail=detail,
        row_ago=Markup(_AGO),  # noqa: S704 (a constant of ours)
    )


def _render_parts(
    env: jinja2.Environment, template: str, viewer: _Viewer, **context: Any
) -> tuple[str, ...]:
    """A row rendered once for every viewer alike (a stand-in user, request and CSRF
    field), cut into the parts _filled() completes per request."""
    html_text = env.get_template(template).render(
        user=viewer,
        request=_Here(),
        csrf_input=Markup(_CSRF),  # noqa: S704 (a constant of ours)
        **context,
    )
    return _parts(html_text)
