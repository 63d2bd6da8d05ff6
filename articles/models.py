"""The app's tables: what it keeps about an account beyond Django's user, and API tokens."""

from __future__ import annotations

from django.conf import settings
from django.db import models

ABOUT_MAX = 2000


class Profile(models.Model):
    """A user's "about" text, whether they want an e-mail digest of their unread replies
    (off by default), and the look-alike key of their name (names.name_key), unique
    so that two sign-ups cannot take look-alike names even when they race. A user made
    before this table, or whose key another account holds, has no key (null)."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="articles_profile",
    )
    about = models.TextField(blank=True, max_length=ABOUT_MAX)
    name_key = models.CharField(max_length=600, unique=True, null=True, blank=True)
    # Opted in on the account page; `manage.py inbox_digest` e-mails the unread replies.
    inbox_digest = models.BooleanField(default=False)

    def __str__(self) -> str:
        return f"profile of user {self.user_id}"


class ApiToken(models.Model):
    """An API token, stored as the SHA-256 of its key (as django-rest-knox does): a copy of
    the database gives no usable token. The key is shown once, when it is made
    (articles/api/tokens.py); `prefix`, its first characters, only tells tokens apart."""

    digest = models.CharField(max_length=64, unique=True)
    prefix = models.CharField(max_length=8)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="articles_api_tokens"
    )
    created = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"API token {self.prefix}… of user {self.user_id}"


class ArchivedArticle(models.Model):
    """An article whose voting closed, moved out of Redis by `manage.py archive`
    (ARTICLES_ARCHIVE_AFTER): its hash as it was (`fields`, decoded by Article.from_hash
    as the Redis one would be), with what the archive's queries filter and order by.
    Its rankings (score:, time:, votes:, submitted:<pk>, group sets) stay in Redis."""

    id = models.PositiveBigIntegerField(primary_key=True)  # the article:<id> number
    time = models.FloatField(db_index=True)
    # The search orders (score:, votes:), indexed as time is: a search's archived page is
    # the top of one of them among the rows holding its words.
    score = models.FloatField(db_index=True)  # time + VOTE_SCORE x net votes, as score:
    net = models.BigIntegerField(db_index=True)  # up - down, as votes: holds it
    poster = models.CharField(max_length=40, db_index=True)  # user:<pk>
    groups = models.TextField(blank=True)  # ",a,b,": a group is found by ",<name>,"
    fields = models.JSONField()  # field -> value, every field of the hash as text
    archived_at = models.FloatField()

    def __str__(self) -> str:
        return f"archived article {self.id}"


class ArchivedComment(models.Model):
    """A comment of an archived article, its hash as it was: the thread is rebuilt from
    `parent` and the orderings' scores (`best`: its score in its parent's best order;
    the new order is by id), tombstones included as the thread shows them."""

    id = models.PositiveBigIntegerField(primary_key=True)  # the comment:<id> number
    article = models.ForeignKey(ArchivedArticle, on_delete=models.CASCADE, related_name="+")
    parent = models.PositiveBigIntegerField(null=True)  # comment id, None at top level
    best = models.FloatField()
    time = models.FloatField(db_index=True)  # comment search and feeds: newest first
    author = models.CharField(max_length=40, db_index=True)  # user:<pk> ("" if deleted)
    fields = models.JSONField()

    class Meta:
        # A thread page reads one level of replies at a time in either order (by score or
        # by id), a page's worth: never the whole thread.
        indexes = [
            models.Index(fields=["article", "parent", "best"], name="archived_comment_best"),
            models.Index(fields=["article", "parent", "id"], name="archived_comment_new"),
        ]

    def __str__(self) -> str:
        return f"archived comment {self.id}"


class ArchivedWord(models.Model):
    """A search posting of an archived article: one of the stems its title, text and link
    give (search.article_words), what postings:<word> held before it was archived."""

    word = models.CharField(max_length=32)
    article = models.ForeignKey(ArchivedArticle, on_delete=models.CASCADE, related_name="+")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["word", "article"], name="archived_word_unique")
        ]

    def __str__(self) -> str:
        return f"{self.word} -> {self.article_id}"


class ArchivedCommentWord(models.Model):
    """A search posting of an archived comment: one of the words its text gives
    (search.comment_words), what comment_postings:<word> held before it was archived."""

    word = models.CharField(max_length=32)
    comment = models.ForeignKey(ArchivedComment, on_delete=models.CASCADE, related_name="+")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["word", "comment"], name="archived_comment_word_unique")
        ]

    def __str__(self) -> str:
        return f"{self.word} -> comment {self.comment_id}"
