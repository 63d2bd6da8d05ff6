"""The articles app: articles, votes and groups stored in Redis."""

from django.apps import AppConfig


class ArticlesConfig(AppConfig):
    name = "articles"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from articles import checks, people  # noqa: F401  (system checks, account signals)
