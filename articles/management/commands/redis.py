"""Start, stop or inspect the embedded Redis server in ARTICLES_EMBEDDED_REDIS_DIR."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import BaseCommand, CommandError, CommandParser

from articles import conf
from articles.operations.embedded import EmbeddedRedis


class Command(BaseCommand):
    help = "Start, stop or report the embedded Redis server (ARTICLES_EMBEDDED_REDIS_DIR)."
    requires_system_checks: list[str] = []  # the checks need the server this starts

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("action", choices=["start", "stop", "status"])

    def handle(self, *args: Any, action: str, **options: Any) -> None:
        directory = conf.embedded_redis_dir()
        if directory is None:
            raise CommandError(
                "No embedded Redis here: ARTICLES_EMBEDDED_REDIS_DIR is not set "
                "(the site uses ARTICLES_REDIS_URL or REDIS_URL)."
            )
        try:
            server = EmbeddedRedis(directory)
        except ImproperlyConfigured as error:  # no redis-server to run
            raise CommandError(str(error)) from error
        if action == "start":
            started = server.start()
            verb = "Started" if started else "Reusing the running"
            self.stdout.write(f"{verb} embedded Redis on {server.socket}")
        elif action == "stop":
            server.stop()
            self.stdout.write("Embedded Redis stopped.")
        else:
            state = "running" if server.is_running() else "not running"
            self.stdout.write(f"Embedded Redis is {state} ({server.socket}).")
