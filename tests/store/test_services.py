"""The writes of the store against a real Redis: every rule of SPEC §1."""

from __future__ import annotations

import json

import pytest

from articles.errors import (
    ArticleNotFound,
    ArticleRemoved,
    DuplicateLink,
    GroupExists,
    GroupNotFound,
    IdempotencyKeyReused,
    InvalidInput,
    NotAllowed,
    VotingClosed,
)
from articles.store import keys, selectors, services
from articles.types import NewPost, Vote
from tests import links
from tests.actors import member_actor, staff_actor

WEEK = 604_800


def post(now: float, user_id: int = 1, **fields) -> int:
    data = {"title": "A title", "link": "https://example.org/a"} | fields
    key = data.pop("idempotency_key", None)
    return services.article_post(
        NewPost(user_id=user_id, poster_name=f"u{user_id}", now=now, **data), idempotency_key=key
    ).id


def score_of(conn, article_id: int) -> float:
    return conn.zscore(keys.SCORE, keys.article(article_id))


# --- posting -------------------------------------------------------------------------


def test_post_writes_the_books_hash_both_zsets_and_the_posters_vote(conn, now):
    article = services.article_post(
        NewPost(
            user_id=7, poster_name="ann", title="  Hello  ", link="https://example.org/", now=now
        )
    )
    assert article.id == 1 and int(conn.get("article:")) == 1
    raw = conn.hgetall("article:1")
    assert raw[b"title"] == b"Hello"
    assert raw[b"link"] == b"https://example.org/"
    assert raw[b"poster"] == b"user:7"
    assert raw[b"poster_name"] == b"ann"
    assert int(raw[b"time"]) == now
    assert raw[b"votes"] == b"1"
    # as the book's hash: no down-votes, text or groups field until there is one to keep
    assert not {b"downvotes", b"text", b"groups"} & raw.keys()
    assert conn.zscore("score:", "article:1") == now + 432
    assert conn.zscore("time:", "article:1") == now
    assert conn.smembers("voted:1") == {b"user:7"}
    assert abs(conn.ttl("voted:1") - WEEK) <= 2
    assert conn.zscore("submitted:7", "article:1") == now
    assert article.votes == 1 and article.score == now + 432 and article.my_vote is Vote.UP


def test_post_ids_come_from_the_counter(now):
    assert [post(now, link=f"https://e.org/{n}") for n in range(3)] == [1, 2, 3]


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"title": "   "}, "title"),
        ({"title": "x" * 301}, "title"),
        ({"title": "two\nlines"}, "title"),
        ({"link": "javascript:alert(1)"}, "link"),
        ({"link": "JaVaScRiPt:alert(1)"}, "link"),
        ({"link": " javascript:alert(1)"}, "link"),
        ({"link": "data:text/html,<b>x</b>"}, "link"),
        ({"link": "vbscript:msgbox"}, "link"),
        ({"link": "ftp://example.org/file"}, "link"),
        ({"link": "https://"}, "link"),
        ({"link": "https://exa mple.org/"}, "link"),
        ({"link": "https://example.org/" + "a" * 2000}, "link"),
        ({"link": "", "text": ""}, "link"),
        ({"groups": ["no such"]}, "groups"),
    ],
)
def test_bad_posts_name_the_field_and_change_nothing(conn, now, fields, field):
    with pytest.raises(InvalidInput) as info:
        post(now, **fields)
    assert info.value.field == field
    assert conn.keys("*") == []


def test_a_title_of_300_characters_and_a_link_of_2000_are_accepted(now):
    link = "https://example.org/" + "a" * (2000 - len("https://example.org/"))
    assert post(now, title="x" * 300, link=link) == 1


def test_a_text_post_needs_no_link(conn, now):
    article_id = post(now, link="", text="Ask: what do you use?")
    assert conn.hget(keys.article(article_id), "text") == b"Ask: what do you use?"


def test_post_into_unknown_group_is_refused_and_changes_nothing(conn, now):
    with pytest.raises(GroupNotFound):
        post(now, groups=["programming"])
    assert conn.exists("article:1", "score:", "time:", "voted:1") == 0


def test_post_into_groups_adds_membership_and_clears_their_cache(conn, now):
    services.group_create(name="programming", actor=staff_actor())
    conn.zadd("score:programming", {"stale": 1})
    article_id = post(now, groups=["programming"])
    assert conn.smembers("group:programming") == {b"article:1"}
    assert conn.exists("score:programming") == 0
    assert selectors.article_get(article_id=article_id).groups == ("programming",)


def test_duplicate_link_open_for_voting_points_at_the_first_article(conn, now):
    first = post(now, link="https://Example.org/page/#top")
    with pytest.raises(DuplicateLink) as info:
        post(now + 10, user_id=2, link="http://www.example.org/page")
    assert info.value.article_id == first
    assert conn.exists("article:2") == 0


def test_a_link_may_be_posted_again_after_the_first_articles_window_closed(now):
    first = post(now - WEEK - 1)
    second = post(now)
    assert second != first


def test_idempotency_key_returns_the_first_article(conn, now):
    first = services.article_post(
        NewPost(user_id=1, poster_name="a", title="T", link="https://e.org/", now=now),
        idempotency_key="k1",
    )
    again = services.article_post(
        NewPost(user_id=1, poster_name="a", title="T", link="https://e.org/", now=now),
        idempotency_key="k1",
    )
    assert again.id == first.id
    assert conn.zcard("time:") == 1


def test_the_post_script_refuses_an_idempotency_key_kept_for_another_request(conn, now):
    """Ensure the fingerprint is checked in post.lua itself, in the same step as the key
    is read, so two different requests racing with one key cannot both be answered."""
    first = post(now, idempotency_key="k1", link="https://e.org/1")
    with pytest.raises(IdempotencyKeyReused) as caught:
        post(now, idempotency_key="k1", link="https://e.org/2")
    assert caught.value.article_id == first
    assert conn.zcard("time:") == 1


def test_an_idempotency_key_of_another_user_is_another_key(now):
    a = post(now, user_id=1, idempotency_key="same", link="https://e.org/1")
    b = post(now, user_id=2, idempotency_key="same", link="https://e.org/2")
    assert a != b


# --- voting --------------------------------------------------------------------------


SWITCHES = [
    (Vote.NONE, Vote.UP, +432),
    (Vote.NONE, Vote.DOWN, -432),
    (Vote.UP, Vote.DOWN, -864),
    (Vote.DOWN, Vote.UP, +864),
    (Vote.UP, Vote.NONE, -432),
    (Vote.DOWN, Vote.NONE, +432),
]


@pytest.mark.parametrize(("before", "after", "delta"), SWITCHES)
def test_vote_switches_move_the_score_by_the_rule(conn, now, before, after, delta):
    article_id = post(now)
    if before is not Vote.NONE:
        services.article_vote(article_id=article_id, user_id=2, direction=before, now=now)
    start = score_of(conn, article_id)
    article = services.article_vote(article_id=article_id, user_id=2, direction=after, now=now)
    assert score_of(conn, article_id) - start == delta
    assert article.score == score_of(conn, article_id)
    assert article.my_vote is after
    in_up = conn.sismember("voted:1", "user:2")
    in_down = conn.sismember("voted_down:1", "user:2")
    assert (in_up, in_down) == (after is Vote.UP, after is Vote.DOWN)
    assert article.votes == 1 + (after is Vote.UP)
    assert article.downvotes == int(after is Vote.DOWN)
    assert article.score == now + 432 * (article.votes - article.downvotes)


@pytest.mark.parametrize("direction", [Vote.UP, Vote.DOWN, Vote.NONE])
def test_repeating_a_vote_changes_nothing(conn, now, direction):
    article_id = post(now)
    services.article_vote(article_id=article_id, user_id=2, direction=direction, now=now)
    before = (conn.hgetall("article:1"), score_of(conn, article_id), conn.hgetall("stats:votes"))
    services.article_vote(article_id=article_id, user_id=2, direction=direction, now=now)
    after = (conn.hgetall("article:1"), score_of(conn, article_id), conn.hgetall("stats:votes"))
    assert before == after


def test_a_down_voter_set_expires_with_the_window(conn, now):
    article_id = post(now)
    services.article_vote(article_id=article_id, user_id=2, direction=Vote.DOWN, now=now + 100)
    assert abs(conn.ttl("voted_down:1") - WEEK) <= 2


def test_a_voter_set_recreated_after_emptying_gets_its_expiry_back(conn, now):
    article_id = post(now)
    services.article_vote(article_id=article_id, user_id=1, direction=Vote.NONE, now=now)
    assert conn.exists("voted:1") == 0
    services.article_vote(article_id=article_id, user_id=1, direction=Vote.UP, now=now + 5)
    assert 0 < conn.ttl("voted:1") <= WEEK


def test_vote_one_second_before_the_window_closes_counts(conn, now):
    article_id = post(now)
    article = services.article_vote(
        article_id=article_id, user_id=2, direction=Vote.UP, now=now + WEEK - 1
    )
    assert article.votes == 2


def test_vote_after_window_raises_voting_closed_and_changes_nothing(conn, now):
    article_id = post(now)
    before = conn.hgetall("article:1"), score_of(conn, article_id)
    for late in (now + WEEK, now + WEEK + 1):
        with pytest.raises(VotingClosed):
            services.article_vote(article_id=article_id, user_id=2, direction=Vote.UP, now=late)
    assert (conn.hgetall("article:1"), score_of(conn, article_id)) == before


def test_vote_on_unknown_article_raises_article_not_found(conn, now):
    with pytest.raises(ArticleNotFound):
        services.article_vote(article_id=99, user_id=2, direction=Vote.UP, now=now)
    with pytest.raises(ArticleNotFound):
        services.article_vote(article_id=0, user_id=2, direction=Vote.UP, now=now)
    assert conn.keys("*") == []


def test_good_article_threshold_is_crossed_both_ways_at_200_up_votes(conn, now):
    article_id = post(now)
    for voter in range(2, 200):  # the poster's vote + 198 = 199
        services.article_vote(article_id=article_id, user_id=voter, direction=Vote.UP, now=now)
    assert conn.zscore("good:", "article:1") is None
    services.article_vote(article_id=article_id, user_id=200, direction=Vote.UP, now=now)
    assert conn.zscore("good:", "article:1") == now
    services.article_vote(article_id=article_id, user_id=200, direction=Vote.DOWN, now=now)
    assert conn.zscore("good:", "article:1") is None
    services.article_vote(article_id=article_id, user_id=200, direction=Vote.UP, now=now)
    assert conn.zscore("good:", "article:1") == now


def test_votes_are_counted_per_day_for_the_dashboard(conn, now):
    article_id = post(now)
    services.article_vote(article_id=article_id, user_id=2, direction=Vote.UP, now=now)
    services.article_vote(article_id=article_id, user_id=3, direction=Vote.DOWN, now=now)
    services.article_vote(article_id=article_id, user_id=3, direction=Vote.NONE, now=now)
    _, posts, votes = selectors.stats_daily(days=1, now=now)[0]
    assert (posts, votes) == (1, 2)


# --- groups --------------------------------------------------------------------------


def test_groups_are_added_and_removed_in_one_step(conn, now):
    for name in ("a", "b", "c"):
        services.group_create(name=name, description=f"group {name}", actor=staff_actor())
    article_id = post(now, groups=["a", "b"])
    groups = services.article_groups_update(
        article_id=article_id, add=["c"], remove=["a"], actor=staff_actor()
    )
    assert groups == ("b", "c")
    assert conn.sismember("group:a", "article:1") == 0
    assert conn.sismember("group:c", "article:1") == 1


def test_group_update_with_unknown_group_changes_nothing(conn, now):
    services.group_create(name="a", actor=staff_actor())
    article_id = post(now, groups=["a"])
    with pytest.raises(GroupNotFound):
        services.article_groups_update(
            article_id=article_id, add=["nope"], remove=["a"], actor=staff_actor()
        )
    assert conn.smembers("group:a") == {b"article:1"}


def test_group_update_of_unknown_article_raises_article_not_found(now):
    services.group_create(name="a", actor=staff_actor())
    with pytest.raises(ArticleNotFound):
        services.article_groups_update(article_id=5, add=["a"], actor=staff_actor())


def test_a_group_cannot_be_added_and_removed_at_once(now):
    services.group_create(name="a", actor=staff_actor())
    with pytest.raises(InvalidInput):
        services.article_groups_update(
            article_id=post(now), add=["a"], remove=["a"], actor=staff_actor()
        )


def test_group_names_are_slugs(conn):
    for bad in ["", ":", "*", "../x", "Upper", "x" * 65, "spa ce", "ü"]:
        with pytest.raises(InvalidInput):
            services.group_create(name=bad, actor=staff_actor())
    assert conn.keys("*") == []


def test_group_create_twice_raises_group_exists():
    services.group_create(name="a", description="first", actor=staff_actor())
    with pytest.raises(GroupExists):
        services.group_create(name="a", description="second", actor=staff_actor())
    assert selectors.group_get(name="a").description == "first"


def test_group_delete_takes_the_group_off_its_articles(conn, now):
    services.group_create(name="a", actor=staff_actor())
    services.group_create(name="b", actor=staff_actor())
    article_id = post(now, groups=["a", "b"])
    selectors.group_article_list(name="a")  # warm the cache
    services.group_delete(name="a", reason="spam", actor=staff_actor("mod"))
    assert conn.exists("group:a", "score:a") == 0
    assert selectors.article_get(article_id=article_id).groups == ("b",)
    with pytest.raises(GroupNotFound):
        selectors.group_get(name="a")
    entry = json.loads(conn.lindex("modlog:", 0))
    assert (entry["actor"], entry["action"], entry["reason"]) == ("mod", "group_delete", "spam")


# --- delete and edit -----------------------------------------------------------------


def test_delete_removes_the_article_from_every_index_group_and_voter_set(conn, now):
    services.group_create(name="a", actor=staff_actor())
    article_id = post(now, groups=["a"])
    services.article_vote(article_id=article_id, user_id=2, direction=Vote.DOWN, now=now)
    selectors.group_article_list(name="a")
    services.article_delete(article_id=article_id, reason="spam", actor=staff_actor("mod", pk=99))
    left = {k.decode() for k in conn.keys("*")}
    assert left <= {
        "article:",
        "groups:",
        "groups:ranked",  # the groups whose rankings are kept (a registry)
        "live:",  # the post's and the vote's live events (capped, never cleaned up)
        "modlog:",
        "removed:",  # when and why, for an old link's 410
        "stats:posts",
        "stats:votes",
        "votes:periods",
    }
    assert conn.zcard("score:") == conn.zcard("time:") == 0


def test_a_staff_deletion_keeps_when_and_why_and_a_posters_own_nothing(conn, now):
    removed = post(now, link="https://e.org/removed")
    own = post(now, user_id=5, link="https://e.org/own")
    services.article_delete(
        article_id=removed, reason="spam", actor=staff_actor("mod", pk=99), now=now
    )
    services.article_delete(article_id=own, actor=member_actor(5, "poster"), now=now)
    kept = conn.hgetall("removed:")
    assert kept == {
        f"article:{removed}".encode(): f'{{"reason": "spam", "time": {int(now)}}}'.encode()
    }
    with pytest.raises(ArticleRemoved) as gone:
        selectors.raise_if_removed(article_id=removed)
    assert gone.value.status_code == 410 and gone.value.reason == "spam"
    selectors.raise_if_removed(article_id=own)  # a plain 404: nothing kept


def test_a_poster_may_delete_their_own_article_only_while_voting_is_open(now):
    open_id = post(now, user_id=5, link="https://e.org/open")
    closed_id = post(now - WEEK - 10, user_id=5, link="https://e.org/closed")
    with pytest.raises(NotAllowed):
        services.article_delete(article_id=open_id, actor=member_actor(6, "other"))
    with pytest.raises(NotAllowed):
        services.article_delete(article_id=closed_id, actor=member_actor(5, "poster"))
    services.article_delete(article_id=open_id, actor=member_actor(5, "poster"))
    with pytest.raises(ArticleNotFound):
        selectors.article_get(article_id=open_id)


def test_deleting_an_article_frees_its_link_for_a_new_post(now):
    first = post(now)
    services.article_delete(article_id=first, actor=member_actor(1, "u1"))
    assert post(now) != first


def test_edit_changes_title_and_link_and_moves_the_link_index(conn, now):
    article_id = post(now)
    article = services.article_edit(
        article_id=article_id, title="New", link="https://new.example/", actor=staff_actor("mod")
    )
    assert (article.title, article.link) == ("New", "https://new.example/")
    assert links.entries(conn) == links.index_of({"http://new.example": "article:1"})
    with pytest.raises(InvalidInput):
        services.article_edit(
            article_id=article_id, title="x", link="javascript:x", actor=staff_actor("mod")
        )


def test_an_emptied_text_or_group_list_leaves_no_field(conn, now):
    """An empty optional field is dropped, not kept empty (the book's hash has none)."""
    services.group_create(name="a", actor=staff_actor())
    article_id = post(now, text="Some text", groups=("a",))
    assert conn.hmget(keys.article(article_id), "text", "groups") == [b"Some text", b"a"]
    services.article_edit(article_id=article_id, text="", actor=staff_actor("mod"))
    services.article_groups_update(article_id=article_id, remove=["a"], actor=staff_actor())
    assert conn.hmget(keys.article(article_id), "text", "groups") == [None, None]
    found = selectors.article_get(article_id=article_id)
    assert (found.text, found.groups) == ("", ())


def test_a_staff_edit_onto_an_open_articles_link_is_refused_and_the_index_kept(conn, now):
    """Ensure moving Y onto open X's link and back off never drops X from links:<b>."""
    x = post(now, link="https://example.org/x")
    y = post(now, user_id=2, link="https://example.org/y")
    with pytest.raises(DuplicateLink) as info:
        services.article_edit(
            article_id=y, title="Y", link="https://www.example.org/x/", actor=staff_actor("mod")
        )
    assert info.value.article_id == x
    assert selectors.article_get(article_id=y).link == "https://example.org/y"
    services.article_edit(
        article_id=y, title="Y", link="https://example.org/z", actor=staff_actor("mod")
    )
    assert links.entries(conn) == links.index_of(
        {"http://example.org/x": "article:1", "http://example.org/z": "article:2"}
    )
    with pytest.raises(DuplicateLink):
        post(now + 1, user_id=3, link="https://example.org/x")


def test_a_staff_edit_may_take_the_link_of_a_closed_article(conn, now):
    old = post(now - WEEK - 1, link="https://example.org/x")
    y = post(now, user_id=2, link="https://example.org/y")
    services.article_edit(
        article_id=y, title="Y", link="https://example.org/x", actor=staff_actor("mod")
    )
    assert links.held(conn, "http://example.org/x") == "article:2"
    services.article_edit(
        article_id=y, title="Y", link="https://example.org/y", actor=staff_actor("mod")
    )
    assert links.held(conn, "http://example.org/x") is None
    assert old != y


def test_a_staff_edit_keeping_its_own_link_is_no_duplicate(conn, now):
    x = post(now, link="https://example.org/x")
    article = services.article_edit(
        article_id=x, title="New", link="https://example.org/x/", actor=staff_actor("mod")
    )
    assert article.title == "New" and links.held(conn, "http://example.org/x") == "article:1"


def test_a_lone_surrogate_is_refused_with_the_field_named(conn, now):
    with pytest.raises(InvalidInput) as info:
        post(now, title="bad \ud800 title")
    assert info.value.field == "title"
    assert conn.keys("*") == []
