"""gunicorn's settings for votesite, the one place `make serve`, the Docker image and the
benchmarks take them from (`gunicorn -c gunicorn.conf.py votesite.wsgi:application`;
gunicorn also reads this file by itself when started in this folder). Options given on
the command line win over these.

Why threads (README, Reliability: "Outages are short and loud"): with a hung Redis a
request waits at most one Redis timeout (1 s, articles.store.breaker). Under sync workers every
request queued behind it waited too (5-7 s with 2 workers); with a few threads per worker
the others go on, and fail at once (503) while the process leaves the hung server alone.
The per-process caches (articles/web/rows.py, pagecache.py, sessionusers.py,
articles/api/tokens.py) are safe to share between the threads.
"""

import os
import sys
from pathlib import Path

# gunicorn reads this file before it applies --chdir: the project beside it, importable.
sys.path.insert(0, str(Path(__file__).resolve().parent))

from votesite.logs import gunicorn_logging

bind = os.environ.get("GUNICORN_BIND", "127.0.0.1:8000")
# WEB_CONCURRENCY is the Docker image's and Heroku-style hosts' name for the worker count.
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
worker_class = "gthread"
threads = int(os.environ.get("GUNICORN_THREADS", "4"))
# A worker whose main loop is silent this long is killed and replaced. With gthread the
# loop keeps beating while a request thread waits, so this is a backstop for a stuck
# process, not a request deadline: the Redis and database timeouts bound requests.
timeout = 30
graceful_timeout = 30
keepalive = 2
# gunicorn's own lines (start-up, worker boot and exit, errors) in the site's format, key=value
# or JSON as DJANGO_LOG_FORMAT says (votesite/logs.py), so the stream has one format. No access
# log of gunicorn's: the site logs each request itself, with its id, user, client and duration.
logconfig_dict = gunicorn_logging(
    fmt=os.environ.get("DJANGO_LOG_FORMAT", "console"),
    level=os.environ.get("DJANGO_LOG_LEVEL", "WARNING"),
)
