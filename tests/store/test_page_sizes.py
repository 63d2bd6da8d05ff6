"""The page sizes of the listings are settings, read at call time (defaults unchanged)."""

from __future__ import annotations

from typing import Any

from articles import conf
from articles.store import selectors, services
from articles.types import NewPost
from tests.actors import staff_actor


def test_the_defaults_are_the_sizes_the_pages_always_had() -> None:
    assert conf.modlog_per_page() == 50 and conf.comment_list_per_page() == 25
    assert conf.per_page() == 25 and conf.home_good() == 50


def test_the_moderation_log_pages_by_its_setting(settings: Any) -> None:
    for n in range(3):
        services.group_create(name=f"g{n}", actor=staff_actor("mod"))
    assert len(selectors.modlog_page().items) == 3
    settings.ARTICLES_MODLOG_PER_PAGE = 2
    first, second = selectors.modlog_page(page=1), selectors.modlog_page(page=2)
    assert (len(first.items), len(second.items), first.per_page) == (2, 1, 2)


def test_the_comment_listings_page_by_their_setting(settings: Any) -> None:
    article = services.article_post(NewPost(user_id=1, poster_name="a", title="T", text="x"))
    for n in range(3):
        services.comment_post(article_id=article.id, user_id=2, author_name="b", text=f"c{n}")
    settings.ARTICLES_COMMENT_LIST_PER_PAGE = 2
    assert len(selectors.recent_comments().items) == 2
    assert len(selectors.user_comments(user_id=2, page=2).items) == 1
