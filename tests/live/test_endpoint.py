"""The live endpoint served for real (uvicorn on a thread, tests/livesite.py), read with a
real HTTP client; events are XADDed in the contract's format straight into `live:`."""

from __future__ import annotations

import threading
import time

import httpx
import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from articles.store import keys
from tests.livesite import AsgiSite, serving, sse_events


def vote(conn, article: int, net: int) -> str:  # type: ignore[no-untyped-def]
    return conn.xadd(keys.LIVE, {"e": "vote", "a": str(article), "n": str(net)}).decode()


def settle(site: AsgiSite, streams: int) -> None:
    """Until the server's hub has `streams` subscribers (a stream opens before its first
    byte is read, so a test waits for it before it writes)."""
    deadline = time.monotonic() + 5
    while site.hub_stats().get("streams") != streams:
        assert time.monotonic() < deadline, site.hub_stats()
        time.sleep(0.01)


def test_an_article_page_gets_its_votes_comments_and_comment_votes_only(asgi_site, conn):  # type: ignore[no-untyped-def]
    with sse_events(asgi_site, "article=12") as reader:
        settle(asgi_site, 1)
        vote(conn, 13, 1)
        conn.xadd(keys.LIVE, {"e": "post", "a": "14"})
        vote(conn, 12, 5)
        conn.xadd(keys.LIVE, {"e": "comment", "a": "13", "c": "39", "p": ""})
        conn.xadd(keys.LIVE, {"e": "comment", "a": "12", "c": "40", "p": ""})
        conn.xadd(keys.LIVE, {"e": "comment", "a": "12", "c": "41", "p": "40"})
        conn.xadd(keys.LIVE, {"e": "cvote", "a": "12", "c": "40", "n": "3"})
        conn.xadd(keys.LIVE, {"e": "inbox", "u": "1", "n": "2"})
        events = reader.events(4)
    assert reader.retry == 3000
    assert [(e.kind, e.data) for e in events] == [
        ("vote", {"article": 12, "net": 5}),
        ("comment", {"article": 12, "comment": 40, "parent": None}),
        ("comment", {"article": 12, "comment": 41, "parent": 40}),
        ("cvote", {"article": 12, "comment": 40, "net": 3}),
    ]
    assert all(e.id for e in events)


def test_a_listing_gets_its_rows_votes_and_new_gets_the_posts(asgi_site, conn):  # type: ignore[no-untyped-def]
    with (
        sse_events(asgi_site, "articles=3,5", timeout=1.5) as listing,
        sse_events(asgi_site, "new=1", timeout=1.5) as new,
    ):
        settle(asgi_site, 2)
        vote(conn, 4, 1)
        vote(conn, 5, 2)
        conn.xadd(keys.LIVE, {"e": "comment", "a": "5", "c": "1", "p": ""})
        conn.xadd(keys.LIVE, {"e": "post", "a": "6"})
        vote(conn, 3, -1)
        assert [e.data for e in listing.events(2)] == [
            {"article": 5, "net": 2},
            {"article": 3, "net": -1},
        ]
        assert [(e.kind, e.data) for e in new.events(1)] == [("post", {"article": 6})]
        assert listing.quiet() == [] and new.quiet() == []


def _session_cookie(user) -> dict[str, str]:  # type: ignore[no-untyped-def]
    client = Client()
    client.force_login(user)
    return {"sessionid": client.cookies["sessionid"].value}


@pytest.mark.django_db(transaction=True)
def test_the_inbox_count_goes_to_its_own_user_only(asgi_site, conn):  # type: ignore[no-untyped-def]
    users = get_user_model().objects
    alice = users.create_user("alice", password="pw-alice-123")
    bob = users.create_user("bob", password="pw-bob-123")
    with (
        sse_events(asgi_site, "new=1", cookies=_session_cookie(alice), timeout=1.5) as mine,
        sse_events(asgi_site, "", cookies=_session_cookie(bob), timeout=1.5) as bobs,
        sse_events(asgi_site, "new=1", timeout=1.5) as anonymous,
    ):
        settle(asgi_site, 3)
        conn.xadd(keys.LIVE, {"e": "inbox", "u": str(bob.pk), "n": "7"})
        conn.xadd(keys.LIVE, {"e": "inbox", "u": str(alice.pk), "n": "2"})
        conn.xadd(keys.LIVE, {"e": "post", "a": "9"})
        assert [(e.kind, e.data) for e in mine.events(2)] == [
            ("inbox", {"unread": 2}),
            ("post", {"article": 9}),
        ]
        assert [(e.kind, e.data) for e in bobs.events(1)] == [("inbox", {"unread": 7})]
        assert [e.kind for e in anonymous.events(1)] == ["post"]
        assert mine.quiet() == [] and bobs.quiet() == [] and anonymous.quiet() == []


def test_a_reconnect_with_last_event_id_resumes_with_no_loss_and_no_duplicate(asgi_site, conn):  # type: ignore[no-untyped-def]
    """Events keep coming while the client is away: the ids it gets over both streams are
    every id written, in order, once."""
    written: list[str] = []
    stop = threading.Event()

    def writer() -> None:
        for i in range(300):
            written.append(vote(conn, 12, i))
            time.sleep(0.002)
        stop.set()

    seen: list[str] = []
    with sse_events(asgi_site, "article=12") as reader:
        settle(asgi_site, 1)
        thread = threading.Thread(target=writer)
        thread.start()
        seen.extend(e.id for e in reader.events(40))
    # Reconnects with the last id seen, a stale `since` beside it: the header wins.
    headers = {"Last-Event-ID": seen[-1]}
    with sse_events(asgi_site, "article=12&since=1", headers=headers) as reader:
        thread.join()
        assert stop.is_set()
        while len(seen) < len(written):
            seen.append(reader.next().id)  # type: ignore[arg-type]
    assert seen == written


def test_since_a_render_time_replays_what_came_after_it(asgi_site, conn):  # type: ignore[no-untyped-def]
    before = vote(conn, 12, 1)
    render_ms = int(before.split("-")[0]) + 1
    time.sleep(0.01)
    later = [vote(conn, 12, n) for n in (2, 3)]
    with sse_events(asgi_site, f"article=12&since={render_ms}") as reader:
        settle(asgi_site, 1)
        newest = vote(conn, 12, 4)
        assert [e.id for e in reader.events(3)] == [*later, newest]


def test_a_resume_point_past_the_kept_events_says_reload(asgi_site, conn):  # type: ignore[no-untyped-def]
    first = vote(conn, 12, 1)
    for n in range(20):
        vote(conn, 12, n)
    conn.xtrim(keys.LIVE, maxlen=5, approximate=False)
    with sse_events(asgi_site, "article=12", headers={"Last-Event-ID": first}) as reader:
        events = reader.events(6)
    assert [e.kind for e in events] == ["vote"] * 5 + ["reload"]
    assert events[-1].data == {}


def test_more_to_replay_than_the_bound_says_reload(asgi_site, conn, settings):  # type: ignore[no-untyped-def]
    settings.ARTICLES_LIVE_REPLAY_EVENTS = 3
    first = vote(conn, 12, 1)
    ids = [vote(conn, 12, n) for n in range(5)]
    with sse_events(asgi_site, "article=12", headers={"Last-Event-ID": first}) as reader:
        events = reader.events(4)
        assert [e.id for e in events[:3]] == ids[:3]
        assert events[3].kind == "reload"
        # and the stream goes on with what comes next
        settle(asgi_site, 1)
        newest = vote(conn, 12, 9)
        assert reader.events(1)[0].id == newest


def test_heartbeats_keep_an_idle_stream_open(asgi_site, settings):  # type: ignore[no-untyped-def]
    settings.ARTICLES_LIVE_HEARTBEAT_SECONDS = 1
    with sse_events(asgi_site, "new=1") as reader:
        event = reader.next()
    assert event.comment == "ping"


@pytest.mark.parametrize(
    "query",
    [
        "",
        "article=x",
        "article=-1",
        "articles=1,,2",
        "articles=" + ",".join(["1"] * 101),
        "new=2",
        "new=1&since=abc",
        "article=%EF%BC%91",
    ],
)
def test_a_bad_query_is_a_400_and_subscribes_nothing(asgi_site, query):  # type: ignore[no-untyped-def]
    response = httpx.get(f"{asgi_site.url}/live/?{query}", timeout=3)
    assert response.status_code == 400, response.text
    assert response.headers["content-type"].startswith("text/plain")
    assert asgi_site.hub_stats().get("streams", 0) == 0


def test_a_bad_last_event_id_is_a_400(asgi_site):  # type: ignore[no-untyped-def]
    response = httpx.get(f"{asgi_site.url}/live/?new=1", headers={"Last-Event-ID": "x"}, timeout=3)
    assert response.status_code == 400


def test_too_many_streams_from_one_address_is_a_429(asgi_site, settings):  # type: ignore[no-untyped-def]
    settings.ARTICLES_LIVE_STREAMS_PER_ADDRESS = 2
    with sse_events(asgi_site, "new=1"), sse_events(asgi_site, "article=1"):
        settle(asgi_site, 2)
        response = httpx.get(f"{asgi_site.url}/live/?new=1", timeout=3)
        assert response.status_code == 429
        assert response.headers["Retry-After"] == "3"
    settle(asgi_site, 0)
    with sse_events(asgi_site, "new=1"):
        pass  # a closed stream frees its place


def test_connecting_too_often_is_a_429_by_the_live_rule(asgi_site, settings):  # type: ignore[no-untyped-def]
    settings.ARTICLES_RATE_LIMITS = {"live": (2, 60)}
    for _ in range(2):
        with sse_events(asgi_site, "new=1"):
            pass
    response = httpx.get(f"{asgi_site.url}/live/?new=1", timeout=3)
    assert response.status_code == 429
    assert int(response.headers["Retry-After"]) > 0


def test_under_wsgi_it_says_unavailable_at_once_and_ends(client):  # type: ignore[no-untyped-def]
    """A page served where no ASGI server answers its stream: one event that tells live.js
    to stop, as a complete answer (no thread held, no error in the page's console)."""
    started = time.monotonic()
    response = client.get("/live/?new=1")
    assert time.monotonic() - started < 1
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/event-stream")
    body = response.content.decode()
    assert "event: unavailable\n" in body and "retry: 3600000\n" in body


def test_turned_off_it_is_a_404(asgi_site, settings):  # type: ignore[no-untyped-def]
    settings.ARTICLES_LIVE_EVENTS = 0
    assert httpx.get(f"{asgi_site.url}/live/?new=1", timeout=3).status_code == 404


def test_a_vote_and_a_post_through_the_services_reach_open_streams(asgi_site, now):  # type: ignore[no-untyped-def]
    from articles.store import services
    from articles.types import Vote
    from tests import factories

    article = factories.article(1, title="A title", poster_name="poster", now=now).id
    with (
        sse_events(asgi_site, f"article={article}") as page,
        sse_events(asgi_site, "new=1") as new,
    ):
        settle(asgi_site, 2)
        services.article_vote(article_id=article, user_id=2, direction=Vote.UP, now=now)
        later = factories.article(1, "Another", "https://example.org/b", now=now).id
        assert [(e.kind, e.data) for e in page.events(1)] == [
            ("vote", {"article": article, "net": 2})  # the poster's own vote and this one
        ]
        assert [(e.kind, e.data) for e in new.events(1)] == [("post", {"article": later})]


@pytest.mark.django_db(transaction=True)
def test_the_django_view_serves_the_same_stream_where_the_asgi_app_is_not_mounted(conn):  # type: ignore[no-untyped-def]
    from votesite.asgi import django_application

    alice = get_user_model().objects.create_user("alice", password="pw-alice-123")
    with (
        serving(django_application) as site,
        sse_events(site, "article=12", cookies=_session_cookie(alice)) as reader,
    ):
        settle(site, 1)
        written = vote(conn, 12, 3)
        conn.xadd(keys.LIVE, {"e": "inbox", "u": str(alice.pk), "n": "1"})
        events = reader.events(2)
        assert [(e.id, e.data) for e in events[:1]] == [(written, {"article": 12, "net": 3})]
        assert events[1].data == {"unread": 1}
        assert httpx.get(f"{site.url}/live/?article=x", timeout=3).status_code == 400


def test_only_get_is_answered(asgi_site):  # type: ignore[no-untyped-def]
    assert httpx.post(f"{asgi_site.url}/live/?new=1", timeout=3).status_code in (403, 405)


def test_a_process_at_its_most_streams_answers_503(asgi_site, settings):  # type: ignore[no-untyped-def]
    settings.ARTICLES_LIVE_MAX_STREAMS = 1
    with sse_events(asgi_site, "new=1"):
        settle(asgi_site, 1)
        response = httpx.get(f"{asgi_site.url}/live/?new=1", timeout=3)
        assert response.status_code == 503
        assert response.headers["Retry-After"] == "5"


def test_a_host_prefix_is_followed_by_the_asgi_app(settings, conn):  # type: ignore[no-untyped-def]
    """A host including the app's URLs under its own prefix: the app answers the live path
    there (and leaves the old one to Django: a 404)."""
    from articles.live.asgi import LiveApp
    from votesite.asgi import django_application

    settings.ROOT_URLCONF = "tests.web.host_without_login_urls"
    with serving(LiveApp(django_application)) as site:
        with sse_events(site, "article=12", prefix="/news/live/") as reader:
            settle(site, 1)
            written = vote(conn, 12, 1)
            assert reader.events(1)[0].id == written
        assert httpx.get(f"{site.url}/live/?new=1", timeout=3).status_code == 404
