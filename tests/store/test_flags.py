"""Flags on articles and comments against a real Redis: one per user per item, the hold
past the threshold (constant-work listings), staff resolve and dismiss."""

from __future__ import annotations

import json
import threading

import pytest

from articles.errors import AlreadyFlagged, InvalidInput, NotAllowed, NotFlagged
from articles.operations import audit
from articles.store import keys, selectors, services
from articles.types import NewPost, Order, Vote
from tests.actors import member_actor, staff_actor


@pytest.fixture(autouse=True)
def _threshold(settings) -> None:  # type: ignore[no-untyped-def]
    settings.ARTICLES_FLAG_THRESHOLD = 2


def post(now: float, user_id: int = 1, groups: tuple[str, ...] = ()) -> int:
    return services.article_post(
        NewPost(
            user_id=user_id,
            poster_name=f"u{user_id}",
            title="A title",
            link=f"https://example.org/{now}",
            groups=list(groups),
            now=now,
        )
    ).id


def flag(article_id: int, user_id: int, reason: str = "spam", kind: str = "article"):
    return services.item_flag(
        kind=kind, item_id=article_id, actor=member_actor(user_id), reason=reason
    )


def ranked(conn, member: str) -> dict[str, bool]:
    return {k: conn.zscore(k, member) is not None for k in ("score:", "time:", "votes:")}


def test_one_flag_per_user_per_item_and_flags_never_count_as_votes(conn, now, audited):
    article_id = post(now)
    before = conn.hgetall("article:1")
    result = flag(article_id, 2, "off-topic")
    assert (result.flags, result.held) == (1, False)
    with pytest.raises(AlreadyFlagged):
        flag(article_id, 2, "spam")
    assert conn.hgetall("flags:article:1") == {b"user:2": b"off-topic"}
    assert conn.zscore(keys.FLAGGED, "article:1") == 1
    assert conn.hgetall("article:1") == before  # no vote, count or score moved
    assert conn.zscore("score:", "article:1") == now + 432


def test_a_bad_reason_is_refused_and_changes_nothing(conn, now):
    post(now)
    for reason in ("", "rude", "SPAM ", None):
        with pytest.raises(InvalidInput) as caught:
            flag(1, 2, reason)  # type: ignore[arg-type]
        assert caught.value.field == "reason"
    assert not conn.exists("flags:article:1", keys.FLAGGED)


def test_the_flag_that_reaches_the_threshold_takes_the_article_out_of_every_listing(
    conn, now, audited
):
    services.group_create(name="news", actor=staff_actor())
    article_id = post(now, groups=("news",))
    other = post(now + 1)
    assert [a.id for a in selectors.group_article_list(name="news").items] == [article_id]
    flag(article_id, 2)
    assert ranked(conn, "article:1") == {"score:": True, "time:": True, "votes:": True}
    result = flag(article_id, 3, "duplicate")
    assert (result.flags, result.held) == (2, True)
    assert ranked(conn, "article:1") == {"score:": False, "time:": False, "votes:": False}
    assert [a.id for a in selectors.article_list(order=Order.SCORE).items] == [other]
    assert selectors.group_article_list(name="news").items == []
    held = selectors.article_get(article_id=article_id)
    assert held.held and held.votes == 1  # its page still answers, saying it is held


def test_a_vote_on_a_held_article_counts_but_does_not_rank_it_again(conn, now, audited):
    article_id = post(now)
    flag(article_id, 2)
    flag(article_id, 3)
    article = services.article_vote(article_id=article_id, user_id=4, direction=Vote.UP)
    assert article.votes == 2
    assert ranked(conn, "article:1") == {"score:": False, "time:": False, "votes:": False}


def test_dismiss_ranks_the_article_again_by_its_votes_and_logs_it(conn, now, audited):
    services.group_create(name="news", actor=staff_actor())
    article_id = post(now, groups=("news",))
    flag(article_id, 2)
    flag(article_id, 3)
    services.article_vote(article_id=article_id, user_id=4, direction=Vote.UP)
    assert selectors.group_article_list(name="news").items == []
    dismissed = services.flag_dismiss(
        kind="article", item_id=article_id, actor=staff_actor("mod"), reason="fine"
    )
    assert dismissed == 2
    assert conn.zscore("score:", "article:1") == now + 2 * 432
    assert conn.zscore("time:", "article:1") == now
    assert conn.zscore("votes:", "article:1") == 2
    assert not conn.hexists("article:1", "held")
    assert not conn.exists("flags:article:1") and conn.zcard(keys.FLAGGED) == 0
    assert [a.id for a in selectors.group_article_list(name="news").items] == [article_id]
    entry = json.loads(conn.lindex("modlog:", 0))
    assert (entry["action"], entry["target"], entry["reason"]) == (
        "flag_dismiss",
        "article:1",
        "fine",
    )
    assert entry["details"] == {"flags": 2}
    with pytest.raises(NotFlagged):
        services.flag_dismiss(kind="article", item_id=article_id, actor=staff_actor("mod"))


def test_resolve_removes_the_article_through_the_staff_removal(conn, now, audited):
    article_id = post(now)
    flag(article_id, 2, "spam")
    services.flag_resolve(
        kind="article", item_id=article_id, actor=staff_actor("mod"), reason="spam"
    )
    assert not conn.exists("article:1", "flags:article:1") and conn.zcard(keys.FLAGGED) == 0
    actions = [json.loads(e)["action"] for e in conn.lrange("modlog:", 0, -1)]
    assert actions == ["flag_resolve", "delete"]


def test_resolve_needs_a_reason_and_staff(conn, now):
    article_id = post(now)
    flag(article_id, 2)
    with pytest.raises(InvalidInput):
        services.flag_resolve(kind="article", item_id=article_id, actor=staff_actor("m"), reason="")
    with pytest.raises(NotAllowed):
        services.flag_resolve(kind="article", item_id=article_id, actor=member_actor(3), reason="x")
    with pytest.raises(NotAllowed):
        services.flag_dismiss(kind="article", item_id=article_id, actor=member_actor(3))
    assert conn.exists("article:1") and conn.zscore(keys.FLAGGED, "article:1") == 1


def test_a_comment_past_the_threshold_is_held_and_resolve_removes_it(conn, now, audited):
    article_id = post(now)
    comment = services.comment_post(article_id=article_id, user_id=2, author_name="b", text="hi")
    flag(comment.id, 3, "abusive", kind="comment")
    flag(comment.id, 4, "abusive", kind="comment")
    assert selectors.comment_get(comment_id=comment.id).held
    queue = selectors.flag_queue()
    assert [(i.member, i.flags, i.reasons, i.held) for i in queue.items] == [
        ("comment:1", 2, {"abusive": 2}, True)
    ]
    services.flag_resolve(kind="comment", item_id=comment.id, actor=staff_actor("m"), reason="rude")
    assert not conn.exists("comment:1", "flags:comment:1")
    assert selectors.flag_queue().items == []


def test_the_queue_lists_the_most_flagged_first_and_keeps_gone_items(conn, now):
    first, second = post(now), post(now + 1)
    flag(first, 2)
    flag(second, 2)
    flag(second, 3, "duplicate")
    services.article_delete(article_id=first, actor=member_actor(1))  # its poster
    queue = selectors.flag_queue()
    assert [(i.id, i.flags, i.exists) for i in queue.items] == [
        (second, 2, True),
        (first, 1, False),
    ]
    assert queue.items[0].reasons == {"spam": 1, "duplicate": 1}
    services.flag_dismiss(kind="article", item_id=first, actor=staff_actor("m"))
    assert [i.id for i in selectors.flag_queue().items] == [second]


def test_concurrent_flags_count_each_user_once(conn, now, settings, audited):
    settings.ARTICLES_FLAG_THRESHOLD = 5
    article_id = post(now)
    errors: list[Exception] = []

    def run(user_id: int) -> None:
        for _ in range(3):
            try:
                flag(article_id, user_id)
            except AlreadyFlagged:
                pass
            except Exception as exc:
                errors.append(exc)

    threads = [threading.Thread(target=run, args=(u,)) for u in range(2, 12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert conn.hlen("flags:article:1") == 10 and conn.zscore(keys.FLAGGED, "article:1") == 10
    assert conn.hexists("article:1", "held") and conn.zscore("score:", "article:1") is None


def sites(domain: str) -> list[int]:
    return [a.id for a in selectors.domain_article_list(domain=domain).items]


def test_a_held_article_leaves_its_sites_page_until_staff_dismiss(conn, now, audited):
    article_id = post(now)
    other = post(now - 60, user_id=5)
    assert sites("example.org") == [article_id, other]
    flag(article_id, 2)
    flag(article_id, 3)  # held
    page = selectors.domain_article_list(domain="example.org")
    assert ([a.id for a in page.items], page.count) == ([other], 1)
    # A staff change of its link moves it to no site's page while it is held; the audit's
    # repair and backfill (check_votes --repair) leave it out too.
    services.article_edit(
        article_id=article_id,
        link="https://example.com/moved",
        actor=staff_actor("mod"),
        reason="the right address",
    )
    assert sites("example.com") == [] and sites("example.org") == [other]
    assert audit.invariant_audit() == []
    assert audit.domain_backfill() == 0
    services.flag_dismiss(kind="article", item_id=article_id, actor=staff_actor("mod"))
    assert sites("example.com") == [article_id] and sites("example.org") == [other]


def test_the_audit_takes_a_held_article_out_of_its_sites_index(conn, now):
    article_id = post(now)
    flag(article_id, 2)
    flag(article_id, 3)
    conn.zadd("domain:example.org", {"article:1": now})  # as code before holding wrote it
    found = [p.kind for p in audit.invariant_audit()]
    assert found == ["domain_stale"]
    audit.domain_entries_repair(audit.invariant_audit())
    assert audit.invariant_audit() == [] and sites("example.org") == []
