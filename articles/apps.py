"""The articles app: articles, votes and groups stored in Redis."""

from django.apps import AppConfig


class ArticlesConfig(AppConfig):
    name = "articles"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from articles.operations import checks  # noqa: F401  (start-up checks)
        from articles.store import logins, people  # noqa: F401  (login and account signals)
