"""Live pages in headless Chromium, on the site served over ASGI (tests/livesite.py): one
browser comments, replies and votes, another sees the points and the "new comments"
notice within 1 s and, on a click, the comments threaded in place; /new/ says "N new
articles"; the header's inbox badge rises and falls; a page catches up after a server
restart with nothing lost and nothing twice; with the stream refused the page works as
without it. axe-core on the pages with their notices shown; screenshots at 1280 and 390 px,
light and dark, in /tmp/shots-live-pages/."""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Page, expect

from articles.store import services
from articles.types import NewPost, Vote
from articles.web import livepage
from tests import factories
from tests.browser.conftest import PASSWORD
from tests.livesite import AsgiSite, asgi_site, serving  # noqa: F401 (asgi_site: a fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDE, PHONE = 1280, 390
AXE = Axe()
BLOCKING = ("serious", "critical")
SHOTS = Path("/tmp/shots-live-pages")
WITHIN = 1000  # ms: what another browser may take to show a write


def post(who: Any, title: str, link: str) -> int:
    return services.article_post(
        NewPost(user_id=who.pk, poster_name=who.get_username(), title=title, link=link)
    ).id


def listening(page: Page) -> None:
    """Wait until the page's stream is open."""
    expect(page.locator("[data-live]")).to_have_attribute("data-live-state", "open")


def shows_within(page: Page, script: str, arg: Any = None, ms: int = WITHIN) -> float:
    """Wait (polling every frame) until `script` is true on the page; the seconds it took."""
    started = time.monotonic()
    page.wait_for_function(script, arg=arg, timeout=ms)
    return time.monotonic() - started


def notice_says(page: Page, kind: str, text: str) -> float:
    """Wait until the notice of `kind` (comments, new) reads `text`; the seconds it took."""
    return shows_within(
        page,
        "([k, t]) => (document.querySelector(`[data-live-notice=${k}] button`) || {})"
        ".textContent === t",
        [kind, text],
    )


def net_is(page: Page, selector: str, value: int, ms: int = WITHIN) -> float:
    return shows_within(
        page,
        "([s, v]) => [...document.querySelectorAll(s)].every(e => e.textContent.trim() === v)"
        " && document.querySelectorAll(s).length > 0",
        [selector, str(value)],
        ms,
    )


def blocking(page: Page) -> list[str]:
    found = []
    for violation in AXE.run(page).response["violations"]:
        if violation["impact"] in BLOCKING:
            targets = "; ".join(" ".join(map(str, n["target"])) for n in violation["nodes"][:4])
            found.append(
                f"{violation['impact']} {violation['id']}: {violation['help']} ({targets})"
            )
    return found


def shots(page: Page, name: str) -> list[str]:
    """Screenshots of the page as it is at 1280 and 390 px, light and dark (the viewport,
    where the notice is); the widths checked; what does not fit, said."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    problems = []
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        for width in (WIDE, PHONE):
            page.set_viewport_size({"width": width, "height": 900})
            wide = page.evaluate("document.documentElement.scrollWidth")
            if wide > width:
                problems.append(f"{name} {scheme} @{width}: {wide} px wide")
            notice = page.locator(".live-notice:not(:empty)").first
            if notice.count():
                box = notice.bounding_box()
                if box is None or box["x"] < 0 or box["x"] + box["width"] > width:
                    problems.append(f"{name} {scheme} @{width}: the notice does not fit")
                notice.scroll_into_view_if_needed()
            page.screenshot(path=str(SHOTS / f"{name}-{scheme}-{width}.png"))
    page.emulate_media(color_scheme="light")
    page.set_viewport_size({"width": WIDE, "height": 900})
    return problems


@pytest.fixture
def people(db) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    return {name: factories.user(name, password=PASSWORD) for name in ("ann", "bob", "carl")}


# --- two browsers -------------------------------------------------------------------------


def test_another_browser_sees_votes_and_comments_within_a_second_and_threaded_on_click(
    asgi_site: AsgiSite,  # noqa: F811
    visitor: Callable[..., Page],
    people: dict[str, Any],
) -> None:
    base = asgi_site.url
    carl = people["carl"]
    article = post(carl, "Streams in practice", "https://example.org/streams")
    top = factories.comment(carl, article, "Consumer groups keep a cursor each.").id
    bob = visitor("bob", base)
    bob.goto(f"{base}/a/{article}/")
    listening(bob)
    ann = visitor("ann", base)
    ann.goto(f"{base}/a/{article}/")
    taken: dict[str, float] = {}

    # An up-vote on the article (1 point: its poster's own), through ann's arrow (vote.js).
    ann.click(f"#a{article} .arrow.up")
    expect(ann.locator(f"#a{article} .vote [data-field=net]")).to_have_text("2")
    taken["article vote"] = net_is(bob, f"#a{article} [data-field=net]", 2)
    expect(bob.locator("dl.facts [data-field=net]")).to_have_text("2")
    # The up and down counts on hover are not in the event: gone rather than wrong.
    assert bob.locator(f"#a{article} [data-field=counts]").get_attribute("title") is None

    # An up-vote on carl's comment.
    ann.click(f"#c{top} .arrow.up")
    expect(ann.locator(f"#c{top} .c-meta [data-field=net]")).to_have_text("1")
    taken["comment vote"] = net_is(bob, f"#c{top} .c-meta [data-field=net]", 1)
    expect(bob.locator(f"#c{top} .c-meta [data-field=points]")).to_have_text("point")

    # A comment of ann's own, then a reply (inline form, comments.js) to carl's.
    ann.fill("#comments > form.comment-form textarea", "XREAD BLOCK waits for the next one.")
    ann.click("#comments > form.comment-form button[type=submit]")
    expect(ann.locator(".comment", has_text="XREAD BLOCK waits")).to_have_count(1)
    notice = bob.locator("[data-live-notice=comments] button")
    taken["comment"] = notice_says(bob, "comments", "1 new comment")
    ann.click(f"#c{top} .reply-link")
    ann.fill(f"#reply-text-{top}", "And XACK moves it on.")
    ann.click(f"#c{top} .reply-form button[type=submit]")
    expect(ann.locator(".markdown", has_text="And XACK moves it on.")).to_have_count(1)
    taken["reply"] = notice_says(bob, "comments", "2 new comments")
    # Polite, and the focus stays where the reader had it.
    expect(bob.locator("[data-live-notice=comments]")).to_have_attribute("role", "status")
    assert bob.evaluate("document.activeElement === document.body")
    problems = blocking(bob)
    problems += shots(bob, "article-new-comments")

    # A reply of bob's own, half typed, stays through it.
    bob.click(f"#c{top} .reply-link")
    bob.fill(f"#reply-text-{top}", "Half typed")
    # On click: both in place, threaded; the notice gone; the focus on the first new one.
    notice.click()
    expect(notice).to_have_count(0)
    reply = bob.locator(f"#c{top} > details > ol.comments > li.comment", has_text="And XACK")
    expect(reply).to_have_count(1)
    expect(
        bob.locator("#comments .thread-body > ol.comments > li.comment", has_text="XREAD BLOCK")
    ).to_have_count(1)
    expect(bob.locator("#comments li.comment")).to_have_count(3)
    expect(bob.locator(".reply-form")).to_have_count(1)
    expect(bob.locator(f"#c{top} > details > .c-main .reply-form textarea")).to_have_value(
        "Half typed"
    )
    expect(bob.locator("#comments-title")).to_have_text("3 comments")
    expect(bob.locator(f"#a{article} .meta")).to_contain_text("3 comments")
    expect(bob.locator("dl.facts")).to_contain_text("2 (2 up, 0 down)")
    problems += blocking(bob)
    problems += shots(bob, "article-brought-up-to-date")
    focused = bob.evaluate("document.activeElement.id")
    assert focused.startswith("c") and focused != f"c{top}", focused
    assert bob.url == f"{base}/a/{article}/"  # no reload

    # vote.js and comments.js work on the new comments.
    new_id = int(reply.get_attribute("data-comment") or 0)
    bob.click(f"#c{new_id} .arrow.up")
    expect(bob.locator(f"#c{new_id} .c-meta [data-field=net]")).to_have_text("1")
    assert bob.url == f"{base}/a/{article}/"
    bob.click(f"#c{new_id} .reply-link")
    expect(bob.locator(f"#reply-text-{new_id}")).to_be_focused()
    # ... and ann's page, which saw it all, takes bob's vote in turn.
    net_is(ann, f"#c{new_id} .c-meta [data-field=net]", 1)

    # A vote down to 0 and below: the number and its word follow.
    started = time.monotonic()
    services.article_vote(article_id=article, user_id=people["ann"].pk, direction=Vote.DOWN)
    net_is(bob, f"#a{article} [data-field=net]", 0)
    taken["vote, from the write's call"] = time.monotonic() - started
    expect(bob.locator(f"#a{article} [data-field=points]")).to_have_text("points")
    print(
        "\nlive: another browser showed it after (s):", {k: round(v, 3) for k, v in taken.items()}
    )
    assert not problems, "\n".join(problems)


def test_new_says_how_many_articles_came_and_shows_them_on_click(
    asgi_site: AsgiSite,  # noqa: F811
    visitor: Callable[..., Page],
    people: dict[str, Any],
) -> None:
    base = asgi_site.url
    first = post(people["carl"], "The first one", "https://example.org/1")
    reader = visitor(None, base)
    reader.goto(f"{base}/new/")
    listening(reader)
    writer = visitor("ann", base)
    writer.goto(f"{base}/submit/")
    writer.fill("#id_title", "Posted from a browser")
    writer.fill("#id_link", "https://example.org/browser")
    writer.click("form button[type=submit]:has-text('Post')")
    expect(writer.locator("h1.title")).to_contain_text("Posted from a browser")
    took = notice_says(reader, "new", "1 new article")
    second = post(people["bob"], "And a second", "https://example.org/2")
    notice_says(reader, "new", "2 new articles")
    problems = blocking(reader)
    problems += shots(reader, "new-articles")
    # By keyboard: it is a button like any other.
    reader.locator("[data-live-notice=new] button").focus()
    reader.keyboard.press("Enter")
    expect(reader.locator("[data-live-notice=new] button")).to_have_count(0)
    expect(reader.locator(".items > li")).to_have_count(3)
    expect(reader.locator(".items article.item").first).to_have_id(f"a{second}")
    expect(reader.locator(f"#a{first}")).to_have_count(1)
    # The stream now follows the new rows too.
    listening(reader)
    services.article_vote(article_id=second, user_id=people["carl"].pk, direction=Vote.UP)
    net_is(reader, f"#a{second} [data-field=net]", 2)
    print(f"\nlive: /new/ said '1 new article' after {took:.3f} s")
    assert not problems, "\n".join(problems)


def test_the_inbox_badge_rises_with_a_reply_and_falls_when_read_in_another_tab(
    asgi_site: AsgiSite,  # noqa: F811
    visitor: Callable[..., Page],
    people: dict[str, Any],
) -> None:
    base = asgi_site.url
    ann, bob = people["ann"], people["bob"]
    article = post(people["carl"], "Replies", "https://example.org/replies")
    mine = factories.comment(ann, article, "A comment of ann's.").id
    page = visitor("ann", base)
    page.goto(f"{base}/new/")
    listening(page)
    badge = page.locator(".account .inbox-link .badge")
    expect(badge).to_have_count(0)
    factories.comment(bob, article, "A reply to ann.", mine)
    took = shows_within(page, "() => !!document.querySelector('.inbox-link .badge')")
    expect(badge).to_have_text("1 unread reply")
    expect(page.locator(".inbox-link")).to_have_class("inbox-link has-unread")
    factories.comment(people["carl"], article, "Another reply.", mine)
    expect(badge).to_have_text("2 unread replies")
    problems = blocking(page)
    problems += shots(page, "inbox-badge")
    other = page.context.new_page()
    other.goto(f"{base}/inbox/")
    other.click("text=Mark all read")
    expect(other.locator(".inbox-item.unread")).to_have_count(0)
    expect(badge).to_have_count(0)
    expect(page.locator(".inbox-link")).to_have_class("inbox-link")
    print(f"\nlive: the badge rose after {took:.3f} s")
    assert not problems, "\n".join(problems)


# --- the stream goes and comes back ----------------------------------------------------------


@pytest.mark.parametrize("meanwhile", ["no answer", "503"])
def test_after_a_server_restart_the_page_catches_up_with_nothing_lost_or_twice(
    visitor: Callable[..., Page], people: dict[str, Any], meanwhile: str
) -> None:
    """Down, the stream is either not answered (EventSource tries again by itself, with
    Last-Event-ID) or answered 503 by a proxy (EventSource gives up; live.js tries again,
    with since=<the last id seen>)."""
    ann, bob, carl = people["ann"], people["bob"], people["carl"]
    article = post(carl, "Restarts", "https://example.org/restart")
    refusing = [False]
    requests: list[tuple[str, str]] = []

    def through(route: Any) -> None:
        request = route.request
        requests.append((request.url, request.all_headers().get("last-event-id", "")))
        if refusing[0]:
            route.fulfill(status=503, body="unavailable", headers={"Retry-After": "1"})
        else:
            route.continue_()

    with serving() as site:
        base, port = site.url, int(site.url.rsplit(":", 1)[1])
        reader = visitor(None, base)
        if meanwhile == "503":
            reader.route("**/live/**", through)
        else:  # not intercepted: the browser's own request, Last-Event-ID and all
            reader.on(
                "request",
                lambda r: (
                    requests.append((r.url, r.all_headers().get("last-event-id", "")))
                    if "/live/" in r.url
                    else None
                ),
            )
        reader.goto(f"{base}/a/{article}/")
        listening(reader)
        services.article_vote(article_id=article, user_id=ann.pk, direction=Vote.UP)
        net_is(reader, f"#a{article} [data-field=net]", 2)
    # The server is gone: the writes go on meanwhile.
    refusing[0] = meanwhile == "503"
    expect(reader.locator("[data-live]")).not_to_have_attribute("data-live-state", "open")
    services.article_vote(article_id=article, user_id=bob.pk, direction=Vote.UP)
    services.article_vote(article_id=article, user_id=500, direction=Vote.UP)
    made = [
        factories.comment(bob, article, f"Written while it was down, {n}.").id for n in range(3)
    ]
    factories.comment(ann, article, "A reply, also meanwhile.", made[0])
    if refusing[0]:  # EventSource's own next try (retry: 3000) meets the 503
        expect(reader.locator("[data-live]")).to_have_attribute(
            "data-live-state", "waiting", timeout=6000
        )
    else:
        time.sleep(1.5)
    refusing[0] = False
    with serving(port=port):
        listening(reader)
        net_is(reader, f"#a{article} [data-field=net]", 4, ms=10_000)
        notice = reader.locator("[data-live-notice=comments] button")
        expect(notice).to_have_text("4 new comments")
        # Events written after the reconnection add to it, once each.
        factories.comment(carl, article, "After it came back.")
        expect(notice).to_have_text("5 new comments")
        notice.click()
        expect(reader.locator("#comments li.comment")).to_have_count(5)
        expect(notice).to_have_count(0)
        reader.wait_for_timeout(500)
        expect(reader.locator("[data-live-notice=comments] button")).to_have_count(0)
    print(f"\nlive: stream requests over the restart ({meanwhile}):")
    for url, last in requests:
        print(f"  {url.split('/live/', 1)[1]}  Last-Event-ID: {last or '-'}")
    # The first from the page's render time, the last (that got through) from the last
    # event seen. (An intercepted request shows no Last-Event-ID: the browser adds it after.)
    assert "-" not in requests[0][0].rsplit("since=", 1)[1] and not requests[0][1]
    url, last = requests[-1]
    assert "-" in last or "-" in url.rsplit("since=", 1)[1], requests


def test_with_the_stream_refused_the_page_works_and_tries_again_ever_later(
    asgi_site: AsgiSite,  # noqa: F811
    visitor: Callable[..., Page],
    people: dict[str, Any],
) -> None:
    base = asgi_site.url
    article = post(people["carl"], "No stream", "https://example.org/none")
    tries: list[float] = []

    def refuse(route: Any) -> None:
        tries.append(time.monotonic())
        route.fulfill(status=503, body="unavailable", headers={"Retry-After": "1"})

    page = visitor("ann", base)
    page.route("**/live/**", refuse)
    page.goto(f"{base}/a/{article}/")
    page.click(f"#a{article} .arrow.up")
    expect(page.locator(f"#a{article} .vote [data-field=net]")).to_have_text("2")
    page.fill("#comments > form.comment-form textarea", "Posted with no stream.")
    page.click("#comments > form.comment-form button[type=submit]")
    expect(page.locator(".comment", has_text="Posted with no stream.")).to_have_count(1)
    page.wait_for_timeout(6000)
    gaps = [round(b - a, 2) for a, b in itertools.pairwise(tries)]
    print(f"\nlive: refused stream tried {len(tries)} times, gaps {gaps} s")
    assert 2 <= len(tries) <= 6, tries
    # Without JavaScript: the forms, as ever.
    plain = visitor("bob", base, java_script_enabled=False)
    plain.goto(f"{base}/a/{article}/")
    plain.click(f"#a{article} .arrow.up")
    expect(plain.locator(f"#a{article} .vote [data-field=net]")).to_have_text("3")
    expect(plain.locator("[data-live-notice]:not(:empty)")).to_have_count(0)


def test_a_page_too_far_behind_offers_a_reload(
    asgi_site: AsgiSite,  # noqa: F811
    visitor: Callable[..., Page],
    people: dict[str, Any],
    settings: Any,
) -> None:
    settings.ARTICLES_LIVE_REPLAY_EVENTS = 2
    base = asgi_site.url
    article = post(people["carl"], "Behind", "https://example.org/behind")
    page = visitor(None, base)

    def late(route: Any) -> None:
        # More events than the replay gives, between the page's render and its stream.
        for voter in range(100, 104):
            services.article_vote(article_id=article, user_id=voter, direction=Vote.UP)
        route.continue_()

    page.route("**/live/**", late)
    page.goto(f"{base}/a/{article}/")
    button = page.locator("[data-live-notice=page] button")
    expect(button).to_have_text("Reload")
    expect(page.locator("[data-live-notice=page]")).to_contain_text(
        "This page missed some updates."
    )
    page.unroute("**/live/**")
    problems = blocking(page)
    problems += shots(page, "missed-updates")
    # The page reloaded replays from a moment before it was made: past the votes.
    page.wait_for_timeout(livepage.SINCE_MARGIN_MS + 500)
    button.click()
    expect(page.locator(f"#a{article} .vote [data-field=net]")).to_have_text("5")
    assert not problems, "\n".join(problems)


def test_the_notices_speak_the_page_language(
    asgi_site: AsgiSite,  # noqa: F811
    visitor: Callable[..., Page],
    people: dict[str, Any],
) -> None:
    base = asgi_site.url
    article = post(people["carl"], "Auf Deutsch", "https://example.org/de")
    reader = visitor(None, base, locale="de-DE", extra_http_headers={"Accept-Language": "de"})
    reader.goto(f"{base}/new/")
    listening(reader)
    post(people["ann"], "Noch einer", "https://example.org/de2")
    notice_says(reader, "new", "1 neuer Artikel")
    problems = shots(reader, "new-articles-de")
    reader.goto(f"{base}/a/{article}/")
    listening(reader)
    for n in range(2):
        factories.comment(people["bob"], article, f"Kommentar {n}.")
    notice_says(reader, "comments", "2 neue Kommentare")
    services.article_vote(article_id=article, user_id=people["bob"].pk, direction=Vote.UP)
    net_is(reader, f"#a{article} .meta [data-field=net]", 2)
    expect(reader.locator(f"#a{article} .meta [data-field=points]")).to_have_text("Punkte")
    assert not problems, "\n".join(problems)


def test_served_without_asgi_the_page_stops_asking_with_no_console_error(live_server, page):  # type: ignore[no-untyped-def]
    """Pages from a WSGI-only server (make serve's port, pytest's live server): the stream
    answers one `unavailable` event, and live.js stops; nothing goes to the console."""
    factories.article(1, title="Served by WSGI", poster_name="poster")
    errors: list[str] = []
    page.on(
        "console", lambda message: errors.append(message.text) if message.type == "error" else None
    )
    page.goto(f"{live_server.url}/new/")
    expect(page.locator(".live-source")).to_have_attribute("data-live-state", "unavailable")
    page.wait_for_timeout(1500)  # a retry, were there one, would start within this
    expect(page.locator(".live-source")).to_have_attribute("data-live-state", "unavailable")
    assert errors == []
