"""The comment rules that need no Redis: text, best score, decoding."""

import pytest

from articles import validation
from articles.errors import CommentTooDeep, InvalidInput
from articles.types import Article, Comment, comment_best, wilson_lower_bound


def test_comment_text_is_trimmed_and_kept_as_markdown():
    assert validation.clean_comment_text("  *hi*\n\nthere  ") == "*hi*\n\nthere"


@pytest.mark.parametrize("bad", ["", "   \n ", None])
def test_empty_comment_text_is_refused_naming_text(bad):
    with pytest.raises(InvalidInput) as caught:
        validation.clean_comment_text(bad)
    assert caught.value.field == "text"


def test_comment_text_length_limit_names_text(settings):
    settings.ARTICLES_COMMENT_MAX_LENGTH = 10
    assert validation.clean_comment_text("x" * 10) == "x" * 10
    with pytest.raises(InvalidInput) as caught:
        validation.clean_comment_text("x" * 11)
    assert caught.value.field == "text"
    assert caught.value.status_code == 400


def test_too_deep_is_a_400_naming_parent():
    error = CommentTooDeep(64)
    assert error.status_code == 400 and error.field == "parent"
    assert error.body()["errors"] == {"parent": [error.message]}


def test_wilson_bound_ranks_evidence_over_a_single_vote():
    assert wilson_lower_bound(0, 0) == 0
    assert wilson_lower_bound(0, 5) == 0
    assert wilson_lower_bound(10, 1) > wilson_lower_bound(1, 0) > 0
    assert wilson_lower_bound(100, 0) > wilson_lower_bound(10, 0)
    # at 80 % confidence one up-vote alone says "at least 38 % like it"
    assert round(wilson_lower_bound(1, 0), 3) == 0.378


def test_best_score_breaks_ties_oldest_first_and_is_exact():
    assert comment_best(1, 0, 0) > comment_best(2, 0, 0)
    assert comment_best(9, 2, 0) > comment_best(1, 1, 0)
    score = comment_best(123, 7, 2)
    assert score == int(score) and score < 2**53


def test_article_without_a_comments_field_reads_zero():
    raw = {b"time": b"1000", b"votes": b"1", b"title": b"t"}
    article = Article.from_hash(1, raw, score=None, window=10, vote_score=432)
    assert article.comments == 0
    raw[b"comments"] = b"3"
    assert Article.from_hash(1, raw, score=None, window=10, vote_score=432).comments == 3


def test_a_deleted_comment_shows_no_author_or_text():
    raw = {
        b"article": b"article:1",
        b"parent": b"comment:2",
        b"author": b"user:3",
        b"author_name": b"ann",
        b"text": b"secret",
        b"time": b"1000",
        b"state": b"deleted",
        b"depth": b"1",
    }
    comment = Comment.from_hash(4, raw)
    assert (comment.text, comment.author_name, comment.author) == ("", "[deleted]", "")
    assert comment.parent_id == 2 and comment.article_id == 1 and not comment.visible
    raw[b"state"] = b""
    shown = Comment.from_hash(4, raw)
    assert (shown.text, shown.author_name, shown.author_id) == ("secret", "ann", 3)
