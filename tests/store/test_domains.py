"""The sites' indexes (domain:<d>): kept by post, edit and delete in the same step, read
a page at a time, audited, repaired and backfilled by check_votes --repair."""

from __future__ import annotations

import random

import pytest
from django.core.management import call_command

from articles import validation
from articles.errors import ArticleNotFound, InvalidInput
from articles.operations import audit
from articles.store import keys, selectors, services
from tests import factories
from tests.actors import member_actor, staff_actor
from tests.harness import run_together


@pytest.mark.parametrize(
    ("link", "site"),
    [
        ("https://www.Example.ORG/a?b#c", "example.org"),
        ("http://example.org:8080/", "example.org"),
        ("http://sub.example.org./x", "sub.example.org"),
        ("https://xn--bcher-kva.example/", "xn--bcher-kva.example"),
        ("http://127.0.0.1/", "127.0.0.1"),
        ("http://[::1]/", "::1"),
        ("", ""),
        ("ftp://example.org/", ""),  # stored by other code: shown as no link, on no site
        ("//example.org/x", ""),
        ("not a link", ""),
    ],
)
def test_a_links_site_is_its_host_made_canonical(link, site):
    assert validation.link_domain(link) == site


@pytest.mark.parametrize(
    ("typed", "site"),
    [
        ("Example.org", "example.org"),
        ("www.example.org", "example.org"),
        ("bücher.example", "xn--bcher-kva.example"),
        ("BÜCHER.example.", "xn--bcher-kva.example"),
    ],
)
def test_a_typed_site_is_read_as_the_index_names_it(typed, site):
    assert validation.clean_domain(typed) == site
    assert validation.domain_label("xn--bcher-kva.example") == "bücher.example"


@pytest.mark.parametrize("bad", ["", "a b", "a*b", "-a.org", "x" * 300, "a/b", None, 7])
def test_a_name_no_host_can_have_is_refused(bad):
    with pytest.raises(InvalidInput):
        validation.clean_domain(bad)


@pytest.mark.parametrize("bad", ["", "a*b", "a b", "a/b", "x" * 254, "A.org", None])
def test_a_site_key_takes_only_the_characters_of_a_site(bad):
    with pytest.raises(ValueError):
        keys.domain(bad)


@pytest.mark.usefixtures("audited")
def test_posting_indexes_the_article_under_its_site_newest_first(conn, now):
    first = factories.article(1, link="https://www.example.org/1", now=now - 10)
    second = factories.article(2, link="http://EXAMPLE.org/2", now=now)
    factories.article(3, link="https://other.org/3", now=now)
    factories.article(4, link="", text="A text post.", now=now)
    assert keys.domain("example.org") == "domain:example.org"
    page = selectors.domain_article_list(domain="example.org")
    assert [a.id for a in page.items] == [second.id, first.id] and page.count == 2
    assert conn.zscore("domain:example.org", f"article:{first.id}") == now - 10
    assert selectors.domain_article_list(domain="WWW.Example.org.").count == 2
    assert selectors.domain_article_list(domain="nothing.example").count == 0


def test_a_sites_page_takes_two_round_trips_whatever_its_size(round_trips, settings):
    settings.ARTICLES_PER_PAGE = 3
    ids = [factories.article(1, link=f"https://example.org/{n}").id for n in range(7)]
    trips, page = round_trips(lambda: selectors.domain_article_list(domain="example.org", page=2))
    assert trips == 2
    assert [a.id for a in page.items] == ids[::-1][3:6] and page.pages == 3
    with pytest.raises(InvalidInput):
        selectors.domain_article_list(domain="a b")


@pytest.mark.usefixtures("audited")
def test_a_staff_edit_of_the_link_moves_the_article_to_its_new_site(conn):
    a = factories.article(1, link="https://example.org/x")
    services.article_edit(article_id=a.id, actor=staff_actor(), link="https://other.org/x")
    assert selectors.domain_article_list(domain="example.org").count == 0
    assert [x.id for x in selectors.domain_article_list(domain="other.org").items] == [a.id]
    services.article_edit(article_id=a.id, actor=staff_actor(), link="", text="Now a text.")
    assert conn.exists("domain:other.org") == 0
    services.article_edit(article_id=a.id, actor=member_actor(1), title="Retitled")
    assert conn.exists("domain:other.org") == 0


@pytest.mark.usefixtures("audited")
def test_deleting_an_article_takes_it_out_of_its_site(conn):
    a = factories.article(1, link="https://example.org/x")
    factories.article(2, link="https://example.org/y")
    services.article_delete(article_id=a.id, actor=member_actor(1))
    assert conn.zrange("domain:example.org", 0, -1) == [b"article:2"]


def test_the_audit_finds_missing_and_stale_entries_and_the_repair_mends_them(conn):
    a = factories.article(1, link="https://example.org/x")
    b = factories.article(2, link="https://other.org/y")
    conn.zrem("domain:example.org", f"article:{a.id}")
    conn.zadd("domain:elsewhere.org", {f"article:{b.id}": 1, "article:999": 2})
    found = {(p.kind, p.article_id, p.entry) for p in audit.invariant_audit()}
    assert found == {
        ("domain_unindexed", a.id, "domain:example.org"),
        ("domain_stale", b.id, "domain:elsewhere.org"),
        ("domain_stale", 999, "domain:elsewhere.org"),
    }
    call_command("check_votes", "--repair")
    assert audit.invariant_audit() == []
    assert conn.zrange("domain:example.org", 0, -1) == [f"article:{a.id}".encode()]
    assert conn.exists("domain:elsewhere.org") == 0


def test_a_site_index_of_the_wrong_type_is_reported_and_left(conn):
    factories.article(1, link="https://example.org/x")
    conn.delete("domain:example.org")
    conn.set("domain:example.org", "x")
    kinds = [p.kind for p in audit.invariant_audit()]
    assert kinds == ["wrong_type"]
    assert audit.domain_backfill() == 0
    assert conn.get("domain:example.org") == b"x"


def test_the_backfill_indexes_articles_written_before_the_index_in_bounded_batches(conn, now):
    """Ensure a store written before domain:<d> (or by the book's code) gets it from
    check_votes --repair, a batch of time: at a time."""
    ids = [factories.article(1, link=f"https://example.org/{n}", now=now + n).id for n in range(5)]
    factories.article(1, link="", text="No site.")
    conn.delete("domain:example.org")
    assert audit.domain_backfill(batch=2) == 5
    assert conn.zrange("domain:example.org", 0, -1) == [f"article:{i}".encode() for i in ids]
    assert audit.domain_backfill(batch=2) == 0  # again: nothing left to add
    assert audit.invariant_audit() == []


def test_concurrent_posts_edits_and_deletes_keep_every_site_index_exact():
    """Ensure post.lua, edit.lua and delete.lua keep domain:<d> in step with the links
    whatever interleaves: processes post, move and delete articles across three sites."""
    run_together(_site_worker, 6)
    assert audit.invariant_audit() == []
    total = sum(selectors.domain_article_list(domain=s).count for s in SITES)
    linked = [a for a in map(_linked, range(1, 200)) if a]
    assert total == len(linked) > 10


SITES = ("a.example", "b.example", "c.example")


def _site_worker(seed: int) -> None:
    rng = random.Random(seed)
    mine: list[int] = []
    for n in range(12):
        site = rng.choice(SITES)
        mine.append(factories.article(seed + 1, link=f"https://{site}/{seed}-{n}").id)
        if rng.random() < 0.4:
            target = rng.choice(SITES)
            services.article_edit(
                article_id=rng.choice(mine),
                actor=staff_actor(),
                link=f"https://{target}/{n}x{seed}",
            )
        if rng.random() < 0.2 and mine:
            services.article_delete(article_id=mine.pop(0), actor=member_actor(seed + 1))


def _linked(article_id: int) -> str:
    try:
        return selectors.article_get(article_id=article_id).link
    except ArticleNotFound:  # deleted, or never posted
        return ""
