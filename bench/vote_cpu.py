"""Where a token vote's CPU goes: `PUT /api/articles/{id}/vote/` with a kept token (the lean
path, articles/api/lean.py) through Django's WSGI handler with the whole MIDDLEWARE, beside
the fixed JSON view (bench/urls.py) in the same process, on votesite's own settings
(bench/site_settings.py) and a Redis of its own.

    python -m bench.vote_cpu [--articles 2000] [--reps 5] [--calls 300]
    python -m bench.vote_cpu --parts 3000

The first prints {"vote": µs, "fixed": µs}: the median over rounds of process CPU
(time.process_time) per request, both in each round in a shuffled order. With --parts it
prints the CPU spent inside the vote's main steps (each wrapped: add ~1 µs a step), per
vote and inclusive, so a step's figure holds those nested in it. Process CPU leaves out
Redis' own time and the waits for its answers; a busy machine inflates every figure
alike, so compare trees by alternating their runs.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.middleware import cpu_rounds, environ

# One user votes many times a second here: the limits are raised (each request still
# counts itself), or the vote would be timed answering 429.
LIFTED = dict.fromkeys(("vote", "api", "api_user", "api_write"), (10**9, 60))


def callers(articles: int) -> dict[str, Callable[[], int]]:
    """A token vote on a random article and the fixed view, each answering its status; on
    a loaded store, with the token kept (its first use read it from the database)."""
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.handlers.wsgi import WSGIHandler
    from django.core.management import call_command
    from django_redis import get_redis_connection

    from articles.store.tokens import token_create
    from bench import data

    settings.ARTICLES_RATE_LIMITS = {**settings.ARTICLES_RATE_LIMITS, **LIFTED}
    spec = data.Spec(articles=articles, group_size=max(1, articles // 10), now=time.time())
    data.load_redis(get_redis_connection("articles"), spec, index=False)
    call_command("migrate", verbosity=0)
    user = get_user_model().objects.create_user("vote-cpu", password="x-Secret-123")
    token = token_create(user=user)
    handler, rng, body = WSGIHandler(), random.Random(5), b'{"value": "up"}'
    status: list[str] = []

    def start_response(line: str, headers: list[Any], exc_info: Any = None) -> None:
        status.append(line)

    def call(env: dict[str, Any]) -> int:
        status.clear()
        out = handler(env, start_response)
        try:
            b"".join(out)
        finally:
            out.close()
        return int(status[0].split()[0])

    def vote() -> int:
        return call(
            environ(
                f"/api/articles/{rng.randint(1, articles)}/vote/",
                "PUT",
                body,
                CONTENT_TYPE="application/json",
                CONTENT_LENGTH=str(len(body)),
                HTTP_AUTHORIZATION=f"Token {token}",
                HTTP_ACCEPT="application/json",
            )
        )

    def fixed() -> int:
        return call(environ("/bench/fixed/"))

    calls = {"vote": vote, "fixed": fixed}
    for name, one in calls.items():
        for _ in range(100):
            if one() != 200:
                raise SystemExit(f"{name}: answers {one()}, not 200")
    return calls


def time_rounds(calls: dict[str, Callable[[], int]], reps: int, per_round: int) -> dict[str, float]:
    spent = cpu_rounds(calls, reps, per_round)
    return {name: round(statistics.median(v), 1) for name, v in spent.items()}


def parts(vote: Callable[[], int], votes: int) -> dict[str, float]:
    """µs of process CPU per vote inside each step, inclusive."""
    import redis
    from django.core.handlers.base import BaseHandler
    from django.core.handlers.wsgi import WSGIHandler
    from django.http.response import HttpResponseBase

    from articles.api import base, lean
    from articles.http import guarded
    from articles.store import ratelimits, scripts
    from articles.store.services import votes as vote_services

    clock, spent = time.process_time, dict[str, float]()

    def wrap(owner: Any, attr: str, label: str) -> None:
        inner = getattr(owner, attr)

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = clock()
            try:
                return inner(*args, **kwargs)
            finally:
                spent[label] = spent.get(label, 0.0) + clock() - start

        setattr(owner, attr, timed)

    wrap(WSGIHandler, "__call__", "WSGI handler (all but the close)")
    wrap(HttpResponseBase, "close", "response close (request_finished)")
    wrap(BaseHandler, "get_response", "middleware and view")
    wrap(BaseHandler, "resolve_request", "URL resolving")
    wrap(lean.LeanVoteMixin, "dispatch", "view (lean dispatch)")
    wrap(lean, "_plain_vote", "view: plain-vote checks, token, body")
    wrap(ratelimits, "defer", "view: rate-limit windows (defer)")
    wrap(guarded, "vote", "view: guarded.vote")
    wrap(guarded.services, "article_vote_guarded", "vote: article_vote_guarded")
    wrap(scripts.TimedScript, "__call__", "vote: script (timing, written, redis-py)")
    wrap(redis.Redis, "execute_command", "vote: redis-py execute_command")
    wrap(vote_services.GuardedVote, "article", "vote: the Article from the reply")
    wrap(lean, "article_data", "view: article_data")
    wrap(lean, "Response", "view: DRF Response")
    wrap(base.ApiMixin, "finalize_response", "view: finalize_response")
    for _ in range(200):
        vote()
    spent.clear()
    start = clock()
    for _ in range(votes):
        vote()
    whole = clock() - start
    return {"whole vote": round(whole / votes * 1e6, 1)} | {
        label: round(seconds / votes * 1e6, 1) for label, seconds in spent.items()
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--articles", type=int, default=2000)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--calls", type=int, default=300, help="requests per round")
    parser.add_argument("--parts", type=int, default=0, help="votes to split into steps")
    args = parser.parse_args(argv)
    # The request lines go where gunicorn sends them (stderr), here to /dev/null.
    os.dup2(os.open(os.devnull, os.O_WRONLY), 2)
    directory = Path(tempfile.mkdtemp(prefix="vs-vote-cpu-", dir="/tmp"))
    (directory / "var").mkdir()
    sock = directory / "redis" / "redis.sock"
    os.environ.update(
        DJANGO_SETTINGS_MODULE="bench.site_settings",
        DJANGO_DEBUG="false",
        DJANGO_SECRET_KEY="bench-" + "x" * 50,
        BENCH_DIR=str(directory),
        VOTESITE_VAR_DIR=str(directory / "var"),
        REDIS_URL=f"unix://{sock}?db=0",
        REDIS_CACHE_URL=f"unix://{sock}?db=1",
    )
    from bench import servers

    server = servers.redis_server(directory / "redis")
    server.start()
    try:
        import django

        django.setup()
        calls = callers(args.articles)
        if args.parts:
            print(json.dumps(parts(calls["vote"], args.parts)))
        else:
            print(json.dumps(time_rounds(calls, args.reps, args.calls)))
    finally:
        server.stop()
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
