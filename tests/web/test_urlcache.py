"""Listings build URLs from cached patterns; they must equal what reverse() gives."""

import pytest
from django.urls import reverse

from articles.urlcache import url_for


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("articles:article-detail", 1),
        ("articles:article-detail", 987654321987),
        ("articles:article-vote", 42),
        ("articles:user-detail", 7),
        ("articles:group-detail", "cute-animals"),
        ("articles:staff-article", 3),
    ],
)
def test_cached_urls_equal_reverse(name, value):
    assert url_for(name, value) == reverse(name, args=[value])


def test_a_url_without_arguments_and_a_value_that_is_not_a_slug():
    assert url_for("articles:login") == reverse("articles:login")
    assert url_for("articles:good-day", "2026-11-22") == reverse(
        "articles:good-day", args=["2026-11-22"]
    )


@pytest.mark.parametrize(("article", "comment"), [(1, 2), (987654322, 987654321), (5, 5)])
def test_cached_urls_with_two_arguments_equal_reverse(article, comment):
    assert url_for("articles:comment-detail", article, comment) == reverse(
        "articles:comment-detail", args=[article, comment]
    )


def test_a_pages_url_makers_equal_reverse():
    """url_of: the pattern looked up once for a page's many URLs, one or two values each;
    a value the pattern does not fit goes through reverse() (or fails as it does)."""
    from django.urls import NoReverseMatch

    from articles.urlcache import url_of

    one, two = url_of("articles:article-detail"), url_of("articles:comment-detail", 2)
    assert [one(i) for i in (1, 42)] == [
        reverse("articles:article-detail", args=[i]) for i in (1, 42)
    ]
    assert two(3, 17) == reverse("articles:comment-detail", args=[3, 17])
    group = url_of("articles:group-detail")
    assert group("cute-animals") == reverse("articles:group-detail", args=["cute-animals"])
    with pytest.raises(NoReverseMatch):
        two(3, "not/a/slug")
