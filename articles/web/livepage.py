"""What a page tells live.js: the address of its live stream (articles:live with the
page's query) and the moment it was made, in one element at the end of the page.

The query is gathered while the page renders: every article row (rows.article_row) adds
its id, the article page's own row names the article, and /new/'s first page asks for new
posts. The element is rendered after the rows, so it holds all of them, and it depends on
nothing but the page's rows and whether someone is logged in: a listing kept in the
anonymous page cache (pagecache) is right for every visitor it is served to, and a kept row
(rows) carries no per-viewer part for it. A logged-in reader's page with no rows still
gets one (their replies inbox count); an anonymous one gets none.

`data-live-since` is the render time less SINCE_MARGIN_MS: the page's data was read a
little before it, and Redis (whose clock makes the stream ids) may run a little apart from
this process. A page kept in the anonymous cache keeps its own since, so it replays from
when it was made. The client replays idempotently (absolute counts; a comment or article
already on the page is not counted again), so a second of events replayed too many is
harmless and one missed is not. Not more: the endpoint replays at most
ARTICLES_LIVE_REPLAY_EVENTS events of the whole site, and past that says "reload", which a
wide margin would make a busy site's every page say.
"""

from __future__ import annotations

import html
import time
from typing import Any
from urllib.parse import urlencode

import jinja2
from django.urls import NoReverseMatch
from markupsafe import Markup

from articles import conf
from articles.urlcache import url_for

MAX_ROWS = 100  # the endpoint takes at most 100 ids
SINCE_MARGIN_MS = 1000


class Gathered:
    """The page's live query, filled in while it renders (one per render)."""

    __slots__ = ("article", "new", "rows")

    def __init__(self) -> None:
        self.article: int | None = None
        self.rows: dict[int, None] = {}  # ordered, without repeats
        self.new = False


def note_row(context: jinja2.runtime.Context, article_id: int, detail: bool) -> None:
    """An article row rendered on this page (the article itself when `detail`)."""
    live = context.get("live")
    if not isinstance(live, Gathered):
        return  # rendered outside a page (a fragment, a test's own render)
    if detail:
        live.article = article_id
    else:
        live.rows[article_id] = None


@jinja2.pass_context
def live_new(context: jinja2.runtime.Context) -> str:
    """Mark the page as one that shows new posts (the first page of /new/)."""
    live = context.get("live")
    if isinstance(live, Gathered):
        live.new = True
    return ""


@jinja2.pass_context
def live_element(context: jinja2.runtime.Context) -> Markup:
    """`<div hidden data-live=... data-live-since=...>`, or nothing: no query and no one
    logged in, live off (ARTICLES_LIVE_EVENTS 0: the endpoint answers 404), or no live
    endpoint in this site's URLs."""
    if conf.live_events() <= 0:
        return Markup("")
    live = context.get("live")
    query = _query(live) if isinstance(live, Gathered) else {}
    user = context.get("user")
    if not query and not getattr(user, "is_authenticated", False):
        return Markup("")
    try:
        address = url_for("articles:live")
    except NoReverseMatch:
        return Markup("")
    if query:
        address = f"{address}?{urlencode(query, safe=',')}"
    since = int(time.time() * 1000) - SINCE_MARGIN_MS
    return Markup(  # noqa: S704 (the address is escaped right here, the time is a number)
        f'<div class="live-source" hidden data-live="{html.escape(address)}"'
        f' data-live-since="{since}"></div>'
    )


def _query(live: Gathered) -> dict[str, str]:
    query: dict[str, str] = {}
    if live.article is not None:
        query["article"] = str(live.article)
    rows = [i for i in live.rows if i != live.article][:MAX_ROWS]
    if rows:
        query["articles"] = ",".join(map(str, rows))
    if live.new:
        query["new"] = "1"
    return query


def context_values() -> dict[str, Any]:
    """What render_to_string adds to every page's context."""
    return {"live": Gathered()}
