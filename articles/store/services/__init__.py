"""Writes to the article store, by sub-domain. Each multi-key change is one Lua script (lua/)."""

from articles.store.services._common import (
    CLEANUP_BATCH,
    COMMENT_CONTENT,
    COMMENT_PURGE_BATCH,
    article_content,
    comment_content,
    comment_words_seen,
)
from articles.store.services.accounts import (
    cleanups_resume,
    user_forget,
    user_forget_begin,
    user_forget_cancel,
    user_forget_or_leave,
    user_forget_pending,
)
from articles.store.services.articles import (
    article_delete,
    article_edit,
    article_groups_update,
    article_purge,
    article_purge_step,
)
from articles.store.services.comment_indexing import (
    comment_reindex,
    comment_reindex_batch,
    comment_search_entry_drop,
    comment_search_rebuild,
)
from articles.store.services.comments import (
    comment_delete,
    comment_edit,
    comment_post,
    comment_remove,
    comment_vote,
)
from articles.store.services.flags import flag_dismiss, flag_resolve, item_flag
from articles.store.services.groups import group_create, group_delete, group_purge, group_update
from articles.store.services.inbox import inbox_mark_digested, inbox_mark_read
from articles.store.services.indexing import (
    article_reindex,
    search_entry_drop,
    search_index_rebuild,
    search_reindex_batch,
)
from articles.store.services.personal import article_hide, article_save, comment_save
from articles.store.services.posting import (
    article_post,
    article_post_many,
    article_submit,
    comment_submit,
)
from articles.store.services.votes import (
    GuardedVote,
    article_vote,
    article_vote_guarded,
    article_vote_many,
    vote_intent_cast,
)

__all__ = [
    "CLEANUP_BATCH",
    "COMMENT_CONTENT",
    "COMMENT_PURGE_BATCH",
    "GuardedVote",
    "article_content",
    "article_delete",
    "article_edit",
    "article_groups_update",
    "article_hide",
    "article_post",
    "article_post_many",
    "article_purge",
    "article_purge_step",
    "article_reindex",
    "article_save",
    "article_submit",
    "article_vote",
    "article_vote_guarded",
    "article_vote_many",
    "cleanups_resume",
    "comment_content",
    "comment_delete",
    "comment_edit",
    "comment_post",
    "comment_reindex",
    "comment_reindex_batch",
    "comment_remove",
    "comment_save",
    "comment_search_entry_drop",
    "comment_search_rebuild",
    "comment_submit",
    "comment_vote",
    "comment_words_seen",
    "flag_dismiss",
    "flag_resolve",
    "group_create",
    "group_delete",
    "group_purge",
    "group_update",
    "inbox_mark_digested",
    "inbox_mark_read",
    "item_flag",
    "search_entry_drop",
    "search_index_rebuild",
    "search_reindex_batch",
    "user_forget",
    "user_forget_begin",
    "user_forget_cancel",
    "user_forget_or_leave",
    "user_forget_pending",
    "vote_intent_cast",
]
