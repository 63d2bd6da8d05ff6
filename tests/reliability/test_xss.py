"""Stored XSS: hostile titles, texts, usernames, descriptions, log entries and links, some
written straight into Redis as another program could, never run on any page, feed or API
answer. Checked on the served bytes: nothing verbatim, every URL http(s) or relative."""

from __future__ import annotations

import json
import logging
import time
import xml.etree.ElementTree as ET
from datetime import UTC, datetime

import pytest
from django.test import Client
from django.urls import reverse
from django.utils.html import escape

from articles.operations import audit
from articles.store import keys, services
from articles.types import NewPost, Period, Vote
from tests.actors import staff_actor
from tests.reliability.hostile import LINKS, PAYLOADS, html_problems, url_is_safe

log = logging.getLogger("reliability")
pytestmark = pytest.mark.django_db

WEEK = 604_800
ATOM = "{http://www.w3.org/2005/Atom}"
QUERY = "\"><script>alert('q')</script>"  # echoed query values, URL-encoded below
Q = "%22%3E%3Cscript%3Ealert(%27q%27)%3C%2Fscript%3E"
CHECKED = [*PAYLOADS, QUERY]


def book_post(conn, poster_pk: int, **fields: object) -> int:  # type: ignore[no-untyped-def]
    """Post as the book's own article_post does (plus any extra hash fields), bypassing
    every check of ours."""
    article_id = int(conn.incr(keys.ARTICLE_IDS))
    member, voted, now = keys.article(article_id), keys.voted(article_id), time.time()
    conn.sadd(voted, keys.user(poster_pk))
    conn.expire(voted, WEEK)
    conn.hset(member, mapping={"poster": keys.user(poster_pk), "time": now, "votes": 1, **fields})
    conn.zadd(keys.SCORE, {member: now + 432})
    conn.zadd(keys.TIME, {member: now})
    conn.zadd(keys.VOTES, {member: 1})  # ours, not the book's: the audit judges the text alone
    return article_id


@pytest.fixture
def site(make_user, conn, settings):  # type: ignore[no-untyped-def]
    """Every payload as a title, text, poster name, username, description, log entry and
    every hostile link, on articles in group `red`, some of them good (200 up-votes)."""
    settings.ARTICLES_PER_PAGE = 5  # so the pagers render too (they keep query values)
    staff = make_user(PAYLOADS[0], staff=True)
    users = [make_user(p[:150]) for p in PAYLOADS[1:5]]
    plain = make_user("plain")
    services.group_create(name="red", description="x", actor=staff_actor(staff.username))
    conn.hset(keys.GROUPS, "red", PAYLOADS[2])  # a description no form would refuse anyway
    ids = []
    for i, payload in enumerate(PAYLOADS):
        poster = [plain, *users][i % 5]
        article = services.article_post(
            NewPost(
                user_id=poster.pk,
                poster_name=poster.username,
                title=f"t{i}",
                text="x",
                groups=["red"],
            )
        )
        fields = {"title": payload, "text": payload, "poster_name": payload, "link": LINKS[i]}
        conn.hset(keys.article(article.id), mapping=fields)
        ids.append(article.id)
    for link in LINKS[len(PAYLOADS) :]:
        ids.append(book_post(conn, plain.pk, title=PAYLOADS[6], link=link, text=PAYLOADS[3]))
    # Those raw writes leave the link and poster indexes behind; mend them as
    # `check_votes --repair` would, so the audit after each test holds as before.
    audit.index_entries_repair(audit.invariant_audit())
    audit.search_index_repair(audit.invariant_audit())
    audit.top_repair()  # their votes: entries, into the kept top of each period
    audit.domain_entries_repair(audit.invariant_audit())  # and their sites' indexes
    audit.article_karma_repair()  # and their posters' karma, now that submitted: holds them
    for article_id in ids[:3]:  # good articles: the home page, the day page, the good feed
        for voter in range(1000, 1200):
            services.article_vote(article_id=article_id, user_id=voter, direction=Vote.UP)
    # The moderation log: through the services with hostile reasons, and written raw.
    extra = services.article_post(
        NewPost(user_id=plain.pk, poster_name="plain", title="gone", text="x")
    )
    services.article_groups_update(
        article_id=ids[3], remove=["red"], reason=PAYLOADS[4], actor=staff_actor(staff.username)
    )
    services.article_delete(
        article_id=extra.id, reason=PAYLOADS[1], actor=staff_actor(staff.username, pk=staff.pk)
    )
    entry = {
        "time": time.time(),
        "actor": PAYLOADS[0],
        "action": PAYLOADS[1],
        "target": 'article:1"><script>alert(1)</script>',
        "reason": PAYLOADS[7],
        "details": {"add": [PAYLOADS[8]], "remove": [PAYLOADS[9]], "title": PAYLOADS[10]},
    }
    conn.lpush(keys.MODLOG, json.dumps(entry))
    return {"staff": staff, "users": users, "plain": plain, "ids": ids}


def _pages(site) -> list[tuple[str, int]]:  # type: ignore[no-untyped-def]
    today = datetime.now(UTC).date().isoformat()
    pages = ["/", "/new/", "/new/?page=2", "/groups/", "/modlog/", f"/good/{today}/"]
    pages += [f"/top/?period={p.value}" for p in Period] + ["/top/?period=week&page=2"]
    pages += ["/g/red/", "/g/red/?order=score", "/g/red/?order=time", "/g/red/?order=time&page=2"]
    pages += [f"/new/?x={Q}&page=2", f"/g/red/?order=time&{Q}=1"]
    pages += [f"/a/{i}/" for i in site["ids"]]
    people = (*site["users"], site["plain"], site["staff"])
    pages += [reverse("articles:user-detail", args=[u.username]) for u in people]
    pages += [reverse("articles:user-comments", args=[u.username]) for u in people]
    answers = [(page, 200) for page in pages]
    answers += [(f"/top/?period={Q}", 400), (f"/new/?page={Q}", 400), (f"/g/red/?order={Q}", 400)]
    answers += [(f"/good/2026-13-45/?page={Q}", 400)]
    return answers


def _staff_pages(site) -> list[tuple[str, int]]:  # type: ignore[no-untyped-def]
    pages = ["/staff/", "/staff/groups/", "/staff/groups/red/"]
    return [(p, 200) for p in pages + [f"/staff/a/{i}/" for i in site["ids"]]]


def _html(response) -> str:  # type: ignore[no-untyped-def]
    assert response["Content-Type"].startswith("text/html"), response["Content-Type"]
    assert response["X-Content-Type-Options"] == "nosniff"
    return response.content.decode()


def test_hostile_text_and_links_never_run_on_any_page(site, client):  # type: ignore[no-untyped-def]
    viewers = {"anonymous": None, "user": site["users"][0], "staff": site["staff"]}
    tried, urls = 0, 0
    for who, user in viewers.items():
        viewer = Client()
        if user is not None:
            viewer.force_login(user)
        pages = _pages(site) + (_staff_pages(site) if who == "staff" else [])
        if who == "anonymous":
            pages += [(f"/accounts/login/?next={Q}", 200), (f"/signup/?next={Q}", 200)]
        for url, status in pages:
            response = viewer.get(url)
            assert response.status_code == status, (who, url, response.status_code)
            body = _html(response)
            assert html_problems(body, CHECKED) == [], (who, url)
            urls += body.count("href=") + body.count("action=")
            tried += 1
    # The payloads were shown, as text: each title escaped on its article page.
    for article_id, payload in zip(site["ids"], PAYLOADS, strict=False):
        assert escape(payload) in client.get(f"/a/{article_id}/").content.decode()
    log.info(f"xss: {tried} pages, {urls} href/action attributes, {len(PAYLOADS)} payloads")


def test_hostile_text_and_links_never_run_in_the_feeds(site, client):  # type: ignore[no-untyped-def]
    tried = 0
    for url in ("/feeds/top/", "/feeds/new/", "/feeds/good/", "/feeds/g/red/"):
        response = client.get(url)
        assert response.status_code == 200
        assert response["Content-Type"].startswith("application/atom+xml")
        body = response.content
        assert [p for p in CHECKED if ("<" in p or "&" in p) and p.encode() in body] == []
        root = ET.fromstring(body)  # noqa: S314 (our own feed, and the point is to read it)
        entries = root.findall(f"{ATOM}entry")
        assert entries, url
        for element in root.iter():
            for name in ("href", "src", "uri"):
                value = element.get(name)
                if value is not None:
                    assert value.startswith(("http://", "https://")), (url, value)
                    assert url_is_safe(value), (url, value)
            if element.get("type") == "html":
                # A feed reader renders this element's text as HTML: it must be as safe.
                assert html_problems(element.text or "", CHECKED) == [], (url, element.text)
            tried += 1
    log.info(f"xss: {tried} feed elements checked")


API = [
    "/api/articles/",
    "/api/articles/?order=time&page=2",
    "/api/articles/good/",
    "/api/groups/",
    "/api/groups/red/",
    "/api/groups/red/articles/?order=time",
    "/api/users/plain/articles/",
    "/api/modlog/",
    *[f"/api/articles/top/?period={p.value}" for p in Period],
]


def test_hostile_text_comes_back_from_the_api_as_json_data(site):  # type: ignore[no-untyped-def]
    staff = Client()
    staff.force_login(site["staff"])
    today = datetime.now(UTC).date().isoformat()
    urls = [*API, f"/api/articles/good/?date={today}", "/api/stats/"]
    urls += [f"/api/articles/{i}/" for i in site["ids"]]
    tried = 0
    for url in urls:
        response = staff.get(url, HTTP_ACCEPT="application/json")
        assert response.status_code == 200, url
        assert response["Content-Type"] == "application/json", url
        assert response["X-Content-Type-Options"] == "nosniff"
        response.json()
        tried += 1
    for article_id, payload, link in zip(site["ids"], PAYLOADS, LINKS, strict=False):
        data = staff.get(f"/api/articles/{article_id}/", HTTP_ACCEPT="application/json").json()
        assert (data["title"], data["text"], data["poster"]) == (payload, payload, payload)
        assert data["link"] == link  # data, as stored: a client must check it before use
        assert url_is_safe(data["url"]) and data["url"].startswith("http://testserver/api/")
        assert url_is_safe(data["html_url"]) and data["html_url"].startswith("http://testserver/a/")
    # The browsable API shows the same data inside an HTML page: escaped there.
    for url in urls:
        response = staff.get(url, HTTP_ACCEPT="text/html")
        assert response.status_code == 200, url
        assert html_problems(_html(response), CHECKED) == [], url
        tried += 1
    log.info(f"xss: {tried} API answers checked (JSON and browsable)")


NOT_SLUGS = ["\"><script>alert('g')</script>", "Red Team", "../x", "a:b", "*", "ünï", "x" * 100]


def test_group_names_no_key_could_hold_in_an_articles_groups_field_are_not_linked(
    site, client, conn
):  # type: ignore[no-untyped-def]
    """Ensure a `groups` field written by other code neither breaks a page nor links out."""
    article_id = site["ids"][0]
    member = keys.article(article_id)
    original = conn.hget(member, "groups")
    conn.hset(member, "groups", ",".join([*NOT_SLUGS, "red"]))
    client.force_login(site["staff"])
    try:
        urls = ["/", "/new/", "/top/", "/g/red/", f"/a/{article_id}/", f"/staff/a/{article_id}/"]
        for url in urls:
            response = client.get(url)
            assert response.status_code == 200, url
            assert html_problems(_html(response), [*CHECKED, NOT_SLUGS[0]]) == [], url
        assert 'href="/g/red/"' in client.get(f"/a/{article_id}/").content.decode()
        for url in ("/feeds/new/", f"/api/articles/{article_id}/"):
            assert client.get(url, HTTP_ACCEPT="application/json").status_code == 200, url
    finally:
        conn.hset(member, "groups", original)  # the audit after the test compares it to the sets
