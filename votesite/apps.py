"""The votesite project as an app: the host's own start-up hooks and system checks."""

from __future__ import annotations

from django.apps import AppConfig
from django.db.backends.signals import connection_created


class VotesiteConfig(AppConfig):
    name = "votesite"

    def ready(self) -> None:
        from votesite import checks, database

        checks.register()
        connection_created.connect(database.private_sqlite_file, dispatch_uid="votesite-sqlite")
