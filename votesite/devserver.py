"""`make run`'s server: the whole site over ASGI (uvicorn), the live endpoint's streams
included, reloaded when a Python file of the project changes.

    python -m votesite.devserver --host 127.0.0.1 --port 8000 [--no-reload]

uvicorn's own command would do but for the streams: at each reload it waits for them to end
(they never do) or, with a time limit, cancels them with an error logged for each. The
live endpoint's server class closes them at once, as at a production restart
(votesite/workers.py), and the open pages reconnect to the new process.
"""

from __future__ import annotations

import argparse
import contextlib
from pathlib import Path

import uvicorn
from uvicorn.supervisors import ChangeReload

from votesite.workers import DRAIN_SECONDS, StreamClosingServer

BASE = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--no-reload", action="store_true")
    args = parser.parse_args(argv)
    config = uvicorn.Config(
        "votesite.asgi:application",
        host=args.host,
        port=args.port,
        reload=not args.no_reload,
        # The code's folders only (the checkout also holds .venv and var/).
        reload_dirs=[str(BASE / "articles"), str(BASE / "votesite")],
        # The site logs each request and reads X-Forwarded-For itself, as under gunicorn.
        access_log=False,
        proxy_headers=False,
        lifespan="off",  # Django has no lifespan events
        timeout_graceful_shutdown=DRAIN_SECONDS,
    )
    server = StreamClosingServer(config)
    if config.should_reload:
        ChangeReload(config, target=server.run, sockets=[config.bind_socket()]).run()
    else:
        with contextlib.suppress(KeyboardInterrupt):  # Ctrl+C: uvicorn raises it again
            server.run()


if __name__ == "__main__":
    main()
