"""gunicorn's settings for the live endpoint (articles:live, Server-Sent Events), served over
ASGI by uvicorn workers: `gunicorn -c gunicorn.live.conf.py votesite.asgi:application`
(compose.yaml's `live` service, `make serve`). The rest of the site stays on gunicorn.conf.py's
gthread workers; the settings both share (logging, keep-alive) are that file's, read here,
and only what differs is set below.

Why apart: a stream holds its connection for as long as the page is open. Under gthread each
would hold a thread; under one asyncio worker (uvicorn) thousands are a few kB each
(docs/performance.md, Live).
"""

import os
import resource
import runpy
from pathlib import Path

from gunicorn.config import ControlSocket

_shared = runpy.run_path(str(Path(__file__).resolve().with_name("gunicorn.conf.py")))
logconfig_dict = _shared["logconfig_dict"]
keepalive = _shared["keepalive"]
timeout = _shared["timeout"]

bind = os.environ.get("GUNICORN_BIND", "127.0.0.1:8001")
# One asyncio worker holds thousands of idle streams; more workers add CPU for the fan-out,
# each with its own Redis subscription (LIVE_CONCURRENCY).
workers = int(os.environ.get("LIVE_CONCURRENCY", "1"))
worker_class = "votesite.workers.LiveWorker"
# The worker closes its streams at once on shutdown (votesite/workers.py) and gives short
# answers a moment; this is gunicorn's backstop before it kills the worker.
graceful_timeout = 10
# A control socket of its own (gunicornc), beside the site's gunicorn on the same host.
control_socket = str(Path(ControlSocket.default).with_name("gunicorn-live.ctl"))


def on_starting(server: object) -> None:
    """Each stream is an open file: raise the soft limit of open files to the hard one
    (the workers inherit it), as 1024, a common default, would cap a worker at ~1000
    streams. compose.yaml raises the container's hard limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = 1 << 20 if hard == resource.RLIM_INFINITY else hard
    if soft != resource.RLIM_INFINITY and target > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
