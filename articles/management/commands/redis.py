"""Start, stop or inspect the embedded Redis server under var/redis."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from votesite.embedded import EmbeddedRedis


class Command(BaseCommand):
    help = "Start, stop or report the embedded Redis server (used when REDIS_URL is unset)."
    requires_system_checks: list[str] = []  # the checks need the server this starts

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("action", choices=["start", "stop", "status"])

    def handle(self, *args: Any, action: str, **options: Any) -> None:
        if settings.REDIS_URL:
            raise CommandError("REDIS_URL is set: votesite uses that server, not the embedded one.")
        server = EmbeddedRedis(settings.EMBEDDED_REDIS_DIR)
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
