"""The gunicorn worker class of the live endpoint (gunicorn.live.conf.py): uvicorn-worker's
UvicornWorker, with two changes that an endless response needs.

- Shutdown ends the streams at once. uvicorn's graceful shutdown waits for every response
  to finish, and a Server-Sent Events stream never does: a restart or a deploy would hang
  until gunicorn's graceful_timeout killed the worker. Here the worker stops accepting, then
  closes each connection whose response has started and not ended, exactly as if its client
  had left (the app gets http.disconnect and ends the stream quietly); the browser's
  EventSource reconnects, to a new worker, with its Last-Event-ID, and misses nothing.
  Short answers (a 400, a 503) still finish within the drain time.
- No proxy headers: the site reads X-Forwarded-For itself, trusting DJANGO_NUM_PROXIES hops
  (articles/http/addresses.py), as it does under gunicorn's WSGI workers. uvicorn's own
  rewrite of the client address would be a second, different rule.
"""

from __future__ import annotations

import socket
import sys
from typing import Any

from gunicorn.arbiter import Arbiter
from uvicorn.server import Server
from uvicorn_worker import UvicornWorker

# Seconds a short answer has to finish once the streams are closed; then uvicorn cancels
# what is left. gunicorn's graceful_timeout (longer) stays the backstop.
DRAIN_SECONDS = 2


class StreamClosingServer(Server):
    """uvicorn's server, whose shutdown closes the open streams instead of waiting on them."""

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for server in self.servers:
            server.close()  # no new connection while the streams are closed
        for connection in list(self.server_state.connections):
            cycle = getattr(connection, "cycle", None)
            if cycle is not None and cycle.response_started and not cycle.response_complete:
                connection.transport.close()
        await super().shutdown(sockets)


class LiveWorker(UvicornWorker):
    """uvicorn (httptools, uvloop) under gunicorn, for votesite.asgi:application."""

    CONFIG_KWARGS: dict[str, Any] = {
        **UvicornWorker.CONFIG_KWARGS,
        "proxy_headers": False,
        "timeout_graceful_shutdown": DRAIN_SECONDS,
    }

    async def _serve(self) -> None:
        # UvicornWorker._serve with the server class above.
        self.config.app = self.wsgi
        server = StreamClosingServer(config=self.config)
        self._install_sigquit_handler()
        await server.serve(sockets=self.sockets)
        if not server.started:
            sys.exit(Arbiter.WORKER_BOOT_ERROR)
