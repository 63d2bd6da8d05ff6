"""Where a request's time goes: the API page, the home page, a user page and the vote
endpoint run in-process through Django's test client under cProfile, on the benchmark's
data; the time is split by the package whose code ran it.

    python -m bench.profile_views [--articles 100000] [--requests 200]
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import random
import time
from collections import Counter

from bench import scratch_site

GROUPS = [
    ("socket I/O (Redis, the database)", ("<method 'recv", "<method 'sendall", "<method 'send")),
    ("redis-py", ("/redis/",)),
    ("templates", ("/django/template/",)),
    ("Django REST framework", ("/rest_framework/", "/drf_spectacular/")),
    ("Django ORM and SQLite (auth, sessions, tokens)", ("/django/db/", "sqlite3")),
    ("the store (articles/)", ("/articles/",)),
    ("Django, the rest", ("/django/",)),
]


def group_of(filename: str, name: str) -> str:
    where = f"{filename}:{name}"
    for label, needles in GROUPS:
        if any(n in where for n in needles):
            return label
    return "other (Python, json, urls)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--articles", type=int, default=100_000)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--top", type=int, default=8, help="also list the N costliest functions")
    parser.add_argument("--by-tottime", action="store_true", help="rank by own time")
    args = parser.parse_args()
    # one user votes here, many times: lift the per-user vote limit (60 a minute)
    directory = scratch_site("vs-prof-", ARTICLES_VOTES_PER_MINUTE="1000000")
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.test import Client
    from django_redis import get_redis_connection

    from articles.store.tokens import token_create
    from bench import data, servers
    from bench.pages import LIFTED_LIMITS

    # One user votes here, many times: the vote and API write limits (60 a minute) are
    # lifted, or the vote would be profiled answering 429 (each request still counts).
    for name, value in LIFTED_LIMITS.items():
        setattr(settings, name, value)
    # Every page rendered, as the goals measure them: the page cache would profile its hit.
    settings.ARTICLES_ANONYMOUS_PAGE_SECONDS = 0

    server = servers.redis_server(directory / "redis")
    server.start()
    try:
        spec = data.Spec(articles=args.articles, group_size=args.articles // 10, now=time.time())
        data.load_redis(get_redis_connection("articles"), spec)
        call_command("migrate", verbosity=0)
        user = get_user_model().objects.create_user("profiler", password="x-Secret-123")
        token = token_create(user=user)
        client = Client(HTTP_HOST="127.0.0.1")
        rng = random.Random(3)
        calls = {
            "API page GET /api/articles/": lambda: client.get("/api/articles/"),
            "home page GET /": lambda: client.get("/"),
            # The account is user 1, a poster of the bench data (articles / 10,000 of them).
            f"user page GET /u/{user.get_username()}/": lambda: client.get(
                f"/u/{user.get_username()}/"
            ),
            "vote PUT /api/articles/{id}/vote/": lambda: client.put(
                f"/api/articles/{rng.randint(1, args.articles)}/vote/",
                json.dumps({"value": "up"}),
                content_type="application/json",
                HTTP_AUTHORIZATION=f"Token {token}",
            ),
        }
        print(f"{args.requests} requests each, in-process (Django test client), cProfile\n")
        for label, call in calls.items():
            status = call().status_code
            if status >= 400:
                print(f"## {label}: answers {status}, not profiled\n")
                continue
            for _ in range(10):
                call()
            profile = cProfile.Profile()
            start = time.perf_counter()
            profile.enable()
            for _ in range(args.requests):
                call()
            profile.disable()
            took = (time.perf_counter() - start) / args.requests * 1000
            split: Counter[str] = Counter()
            stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
            for (filename, _line, name), (_cc, _nc, tottime, _ct, _callers) in stats.items():
                split[group_of(filename, name)] += tottime
            total = sum(split.values())
            print(f"## {label}: {took:.2f} ms a request under the profiler\n")
            print("| code | share of time |\n|---|---|")
            for group, seconds in split.most_common():
                print(f"| {group} | {seconds / total:.0%} |")
            print()
            if args.top:
                kind = "own time" if args.by_tottime else "cumulative"
                print(f"| function ({kind}) | ms a request |\n|---|---|")
                ranked = sorted(
                    stats.items(), key=lambda item: -item[1][2 if args.by_tottime else 3]
                )
                shown = 0
                for (filename, line, name), (_cc, _nc, tottime, cumtime, _callers) in ranked:
                    if args.by_tottime:
                        cumtime = tottime
                    where = filename.split("site-packages/")[-1].split("/work/")[-1]
                    if "bench/" in where or name in ("<lambda>", "inner", "__call__"):
                        continue
                    print(f"| {where}:{line} {name} | {cumtime / args.requests * 1000:.2f} |")
                    shown += 1
                    if shown >= args.top * 3:
                        break
                print()
    finally:
        server.stop()
        servers.remove(directory)


if __name__ == "__main__":
    main()
