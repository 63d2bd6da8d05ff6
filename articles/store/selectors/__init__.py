"""Reads from the article store, by sub-domain: a constant number of round trips a page."""

from articles.store.selectors.articles import (
    article_get,
    article_list,
    article_post_replay,
    raise_if_removed,
    user_article_list,
    user_karma,
)
from articles.store.selectors.comments import (
    article_comments_feed,
    comment_get,
    comment_post_replay,
    comment_thread,
    recent_comments,
    user_comments,
)
from articles.store.selectors.flags import flag_queue
from articles.store.selectors.groups import group_article_list, group_get, group_list
from articles.store.selectors.modlog import modlog_page
from articles.store.selectors.rankings import (
    front_page,
    good_article_day,
    good_article_page,
    top_article_list,
)
from articles.store.selectors.searching import article_search
from articles.store.selectors.status import stats_daily, store_health, store_status, store_topology

__all__ = [
    "article_comments_feed",
    "article_get",
    "article_list",
    "article_post_replay",
    "article_search",
    "comment_get",
    "comment_post_replay",
    "comment_thread",
    "flag_queue",
    "front_page",
    "good_article_day",
    "good_article_page",
    "group_article_list",
    "group_get",
    "group_list",
    "modlog_page",
    "raise_if_removed",
    "recent_comments",
    "stats_daily",
    "store_health",
    "store_status",
    "store_topology",
    "top_article_list",
    "user_article_list",
    "user_comments",
    "user_karma",
]
