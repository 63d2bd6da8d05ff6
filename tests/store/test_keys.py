"""Key names are a data contract with the book's code: pin every one."""

import pytest

from articles.store import keys


def test_book_keys_are_exactly_the_books():
    assert keys.ARTICLE_IDS == "article:"
    assert keys.SCORE == "score:"
    assert keys.TIME == "time:"
    assert keys.article(92617) == "article:92617"
    assert keys.voted(92617) == "voted:92617"
    assert keys.user(83271) == "user:83271"
    assert keys.group("programming") == "group:programming"
    assert keys.group_order(keys.SCORE, "programming") == "score:programming"
    assert keys.group_order(keys.TIME, "programming") == "time:programming"


def test_votesite_additions_keep_the_colon_style():
    assert keys.GOOD == "good:"
    assert keys.VOTES == "votes:"
    assert keys.GROUPS == "groups:"
    assert (
        keys.link_slot("http://e.org/1")[0]
        == "links:" + keys.link_slot("http://e.org/1")[1].hex()[:3]
    )
    assert keys.MODLOG == "modlog:"
    assert keys.PURGE == "purge:"
    assert keys.FORGET == "forget:"
    assert keys.REMOVED == "removed:"
    assert keys.LIVE == "live:"
    assert keys.group_purge("redis") == "purge:group:redis"
    assert keys.STATS_POSTS == "stats:posts"
    assert keys.STATS_VOTES == "stats:votes"
    assert keys.voted_down(7) == "voted_down:7"
    assert keys.submitted(3) == "submitted:3"
    assert keys.top("week") == "top:week"
    assert keys.top_scratch("day") == "top:day:tmp"
    assert keys.idempotency(3, "abc-1") == "idempotency:3:abc-1"
    assert keys.rate_limit("vote", "42", 1000) == "ratelimit:vote:42:1000"
    assert keys.vote_intent("A" * 22) == "vote_intent:" + "A" * 22
    assert keys.credential_epoch(7) == "credential_epoch:7"


@pytest.mark.parametrize(
    "name", ["", ":", "*", "?", "a:b", "../x", "A", "x" * 65, "ü", "a b", "score:", None, 5]
)
def test_group_keys_refuse_anything_but_a_slug(name):
    with pytest.raises(ValueError):
        keys.group(name)
    with pytest.raises(ValueError):
        keys.group_order(keys.SCORE, name)


@pytest.mark.parametrize("bad", [0, -1, True, "1", 1.5, None])
def test_article_keys_refuse_anything_but_a_positive_int(bad):
    with pytest.raises(ValueError):
        keys.article(bad)


def test_group_order_refuses_a_key_that_is_not_an_order():
    with pytest.raises(ValueError):
        keys.group_order("group:", "x")


def test_article_id_of_reads_only_article_members():
    assert keys.article_id_of("article:12") == 12
    for bad in ["article:", "article:0", "article:01", "article:1:2", "user:1", "article:x"]:
        with pytest.raises(ValueError):
            keys.article_id_of(bad)


def test_user_id_of_reads_only_the_members_user_forms():
    assert keys.user_id_of("user:12") == 12
    assert keys.user_id_of(keys.user(83271)) == 83271
    for bad in ["user:", "user:0", "user:012", "user:١٢", "user:1 ", "user:-1", "article:1", 5]:
        with pytest.raises(ValueError):
            keys.user_id_of(bad)


def test_the_three_readers_of_a_poster_agree():
    """Ensure the article type, the export and the parser read `poster` the same way."""
    from articles.types import Article

    for poster, expected in [("user:7", 7), ("user:0", None), ("user:١٢", None), ("bob", None)]:
        article = Article.from_hash(
            1, {b"poster": poster.encode(), b"time": b"1"}, score=None, window=1, vote_score=1
        )
        assert article.poster_id == expected
        assert keys.user_id_or_none(poster) == expected  # how the export reads it


def test_scan_patterns_are_named_here():
    assert keys.ARTICLE_SCAN == "article:*"
    assert keys.GROUP_SCAN == "group:*"


def test_search_keys():
    assert keys.postings("redis") == "postings:redis"
    assert keys.word_of("postings:redis") == "redis"
    assert keys.posting_id_or_none("12") == 12
    not_ids = ("article:12", "012", "", "1x", "\u0661")  # the last an Arabic-Indic digit
    assert [keys.posting_id_or_none(m) for m in not_ids] == [None] * 5
    assert keys.SEARCH_INDEX_SCAN == "postings:*"
    assert keys.search_cache(7) == "search:7"
    assert keys.search_cache_query(7) == "search:7:q"
    assert keys.search_scratch(7) == "search:7:tmp"


def test_comment_keys():
    assert keys.COMMENT_IDS == "comment:"
    assert keys.COMMENTS == "comments:"
    assert keys.comment(5) == "comment:5"
    assert keys.comment_voted(5) == "comment_voted:5"
    assert keys.comment_voted_down(5) == "comment_voted_down:5"
    assert keys.article_comments(7) == "comments:7"
    assert keys.article_comments_new(7) == "comments_new:7"
    assert keys.replies(5) == "replies:5"
    assert keys.replies_new(5) == "replies_new:5"
    assert keys.user_comments(3) == "user_comments:3"
    assert keys.comment_idempotency(3, "k-1") == "comment_idempotency:3:k-1"
    assert keys.comment_id_of("comment:12") == 12
    for bad in ["comment:", "comment:0", "comment:01", "article:1", "comment:x", None]:
        with pytest.raises(ValueError):
            keys.comment_id_of(bad)
    with pytest.raises(ValueError):
        keys.comment_idempotency(3, "bad key")


@pytest.mark.parametrize("bad", ["", "short", "a:b" * 8, "x" * 65, "é" * 20])
def test_vote_intent_keys_refuse_anything_but_a_token(bad):
    with pytest.raises(ValueError):
        keys.vote_intent(bad)


def test_the_or_none_parsers_read_what_the_strict_ones_read_and_nothing_else():
    assert keys.article_id_or_none("article:12") == 12
    assert keys.comment_id_or_none("comment:7") == 7
    assert keys.user_id_or_none("user:3") == 3
    for bad in ["article:0", "article:012", "comment:x", "user:", "group:a", "user:١٢"]:
        assert keys.article_id_or_none(bad) is None
        assert keys.comment_id_or_none(bad) is None
        assert keys.user_id_or_none(bad) is None


def test_the_flag_keys_name_an_article_or_a_comment_only():
    assert keys.FLAGGED == "flagged:"
    assert keys.flags("article:7") == "flags:article:7"
    assert keys.flags("comment:12") == "flags:comment:12"
    assert keys.flagged_member_of("flags:comment:12") == "comment:12"
    for bad in ("user:1", "article:0", "article:07", "group:x", "", "comment:1:x"):
        with pytest.raises(ValueError):
            keys.flags(bad)
    for bad in ("flags:user:1", "flag:article:1", "flags:article:01"):
        with pytest.raises(ValueError):
            keys.flagged_member_of(bad)
