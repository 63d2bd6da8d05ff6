"""Reads from the article store, by sub-domain: a constant number of round trips a page."""

from articles.store.selectors.articles import (
    article_get,
    article_list,
    article_post_replay,
    domain_article_list,
    raise_if_removed,
    user_article_list,
    user_karma,
    user_karmas,
    user_page,
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
from articles.store.selectors.groups import (
    group_article_list,
    group_get,
    group_list,
    group_names,
)
from articles.store.selectors.inbox import (
    inbox_digest_replies,
    inbox_page,
    inbox_unread,
    inbox_unread_and_epoch,
)
from articles.store.selectors.modlog import modlog_page
from articles.store.selectors.personal import (
    hidden_article_list,
    saved_article_list,
    saved_comment_list,
    upvoted_article_list,
)
from articles.store.selectors.rankings import (
    front_page,
    good_article_day,
    good_article_page,
    top_article_list,
)
from articles.store.selectors.searching import article_search, comment_search
from articles.store.selectors.status import (
    stats_daily,
    store_encodings,
    store_health,
    store_status,
    store_topology,
)

__all__ = [
    "article_comments_feed",
    "article_get",
    "article_list",
    "article_post_replay",
    "article_search",
    "comment_get",
    "comment_post_replay",
    "comment_search",
    "comment_thread",
    "domain_article_list",
    "flag_queue",
    "front_page",
    "good_article_day",
    "good_article_page",
    "group_article_list",
    "group_get",
    "group_list",
    "group_names",
    "hidden_article_list",
    "inbox_digest_replies",
    "inbox_page",
    "inbox_unread",
    "inbox_unread_and_epoch",
    "modlog_page",
    "raise_if_removed",
    "recent_comments",
    "saved_article_list",
    "saved_comment_list",
    "stats_daily",
    "store_encodings",
    "store_health",
    "store_status",
    "store_topology",
    "top_article_list",
    "upvoted_article_list",
    "user_article_list",
    "user_comments",
    "user_karma",
    "user_karmas",
    "user_page",
]
