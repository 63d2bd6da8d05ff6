"""The fast-pages cases (issue 11): every listing page, anonymous and logged in, the article
page, the API lists and the vote endpoint, in-process through Django's test client, each
as CPU time per request beside the bare JSON view's in the same run.

    python -m bench.pages [--articles 20000] [--seconds 0.3] [--reps 5]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import scratch_site

# Goals, as multiples of the bare view's CPU per request (in-process).
PAGE_LIMIT = 8.0
API_LIMIT = 5.0
VOTE_LIMIT = 4.0


@dataclass
class PageCase:
    name: str
    fn: Callable[[], Any]
    limit: float | None  # None: the bare view itself
    cpu: list[float] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)  # in force around its batches

    @property
    def cpu_ms(self) -> float:
        return statistics.median(self.cpu) * 1000 if self.cpu else float("nan")


# One reader votes many times a second here: the limits are raised (each request still pays
# for counting itself), or the vote would be timed answering 429.
LIFTED_LIMITS = {
    "ARTICLES_RATE_LIMITS": {
        "vote": (10**9, 60),
        "api": (10**9, 60),
        "api_user": (10**9, 60),
        "api_write": (10**9, 60),
    },
}


def build(*, articles: int, group: str, seed: int = 7) -> list[PageCase]:
    """The cases, on a store already loaded with `articles` articles and a user database
    already migrated (makes its own users, token and clients). Run them under
    override_settings(**LIFTED_LIMITS)."""
    from django.contrib.auth import get_user_model
    from django.test import Client

    from articles.store.tokens import token_create

    users = get_user_model()
    reader = users.objects.filter(username="pages-reader").first() or users.objects.create_user(
        "pages-reader", password="x-Secret-123"
    )
    token = token_create(user=reader)
    anon = Client(HTTP_HOST="127.0.0.1")
    user = Client(HTTP_HOST="127.0.0.1")
    user.force_login(reader)
    rng = random.Random(seed)

    def article() -> int:
        return rng.randint(1, articles)

    def vote_token() -> Any:
        return anon.put(
            f"/api/articles/{article()}/vote/",
            json.dumps({"value": rng.choice(["up", "down", "none"])}),
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Token {token}",
        )

    def vote_session() -> Any:
        return user.post(
            f"/a/{article()}/vote/",
            {"direction": rng.choice(["up", "down", "none"])},
            HTTP_ACCEPT="application/json",
        )

    pages = {
        "home": "/",
        "new": "/new/",
        **{f"top {p}": f"/top/?period={p}" for p in ("day", "week", "month", "year", "all")},
        "group page": f"/g/{group}/",
        "user page": user_page(),
    }
    cases = [
        PageCase(
            "bare JSON view (votesite, its middleware)", lambda: anon.get("/bench/fixed/"), None
        )
    ]
    for who, client in (("anonymous", anon), ("logged in", user)):
        for name, path in pages.items():
            cases.append(PageCase(f"{name}, {who}", lambda c=client, p=path: c.get(p), PAGE_LIMIT))
        cases.append(
            PageCase(f"article page, {who}", lambda c=client: c.get(f"/a/{article()}/"), PAGE_LIMIT)
        )
    for name, path in pages.items():  # the goals are without the page cache
        cases.append(
            PageCase(
                f"{name}, anonymous, page cache off",
                lambda p=path: anon.get(p),
                PAGE_LIMIT,
                settings={"ARTICLES_ANONYMOUS_PAGE_SECONDS": 0},
            )
        )
    for name, path in (
        ("API articles", "/api/articles/"),
        ("API articles by time", "/api/articles/?order=time"),
        ("API top of the week", "/api/articles/top/?period=week"),
        ("API good", "/api/articles/good/"),
        ("API group articles", f"/api/groups/{group}/articles/"),
    ):
        cases.append(PageCase(name, lambda p=path: anon.get(p), API_LIMIT))
    cases.append(PageCase("vote, token", vote_token, VOTE_LIMIT))
    cases.append(PageCase("vote, session", vote_session, VOTE_LIMIT))
    return cases


def user_page(pk: int = 1) -> str:
    """The page of account `pk` (a poster of the generated articles) under its name, as
    /u/<name>/: /u/<pk>/ only redirects there, and timing it would time the redirect."""
    from django.contrib.auth import get_user_model
    from django.urls import reverse

    users = get_user_model()
    person = users.objects.filter(pk=pk).first() or users.objects.order_by("pk").first()
    if person is None:
        raise RuntimeError("no account to time the user page of")
    return reverse("articles:user-detail", args=[person.get_username()])


@contextlib.contextmanager
def quietly(values: dict[str, Any]) -> Iterator[None]:
    """`values` in force, without override_settings' setting_changed signal: it clears every
    process cache (articles/caches.py: the kept rows, the ages), so each batch of a case with
    settings of its own began cold, and the case after it too; no server changes a setting
    between requests."""
    from django.conf import settings

    missing = object()
    before = {name: getattr(settings, name, missing) for name in values}
    for name, value in values.items():
        setattr(settings, name, value)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is missing:
                delattr(settings, name)
            else:
                setattr(settings, name, value)


def check(cases: list[PageCase]) -> list[str]:
    """Each case answers 2xx (a 4xx would time the refusal, not the page)."""
    problems = []
    for case in cases:
        with quietly(case.settings):
            status = case.fn().status_code
        if status >= 300:
            problems.append(f"{case.name}: answers {status}")
    return problems


def measure(cases: list[PageCase], *, reps: int, seconds: float) -> None:
    """reps rounds, each case one batch of `seconds` of CPU per round, shuffled."""
    order = list(cases)
    shuffle = random.Random(1)
    for case in cases:  # warm up: templates compiled, caches filled
        with quietly(case.settings):
            for _ in range(5):
                case.fn()
    for _ in range(reps):
        shuffle.shuffle(order)
        for case in order:
            spent, calls = 0.0, 0
            with quietly(case.settings):  # outside the timed calls
                while spent < seconds or calls < 3:
                    start = time.process_time()
                    case.fn()
                    spent += time.process_time() - start
                    calls += 1
            case.cpu.append(spent / calls)


def table(
    cases: list[PageCase], plain: dict[str, float] | None = None
) -> tuple[list[str], list[tuple[str, float, float, bool]]]:
    """The markdown rows, and (name, ratio, limit, holds) of each goal. `plain`: the plain
    Django references (name: ms CPU per request), shown first, and each case beside the
    first of them too."""
    bare = cases[0].cpu_ms
    base = next(iter(plain.values())) if plain else None

    def versus(ms: float) -> str:
        return f" {ms / base:.1f} |" if base else ""

    head = " x plain Django |" if base else ""
    lines = [
        f"| request | ms CPU | x bare view |{head} goal | |",
        "|---|---|---|" + ("---|" if base else "") + "---|---|",
        *(
            f"| {name} | {ms:.2f} | {ms / bare:.1f} |{versus(ms)} | |"
            for name, ms in (plain or {}).items()
        ),
        f"| {cases[0].name} | {bare:.2f} | 1 |{versus(bare)} | |",
    ]
    goals = []
    for case in cases[1:]:
        ratio = case.cpu_ms / bare
        holds = case.limit is not None and ratio <= case.limit
        goals.append((case.name, ratio, case.limit or 0.0, holds))
        lines.append(
            f"| {case.name} | {case.cpu_ms:.2f} | {ratio:.1f} |{versus(case.cpu_ms)} "
            f"<= {case.limit:g}x | {'holds' if holds else 'misses'} |"
        )
    return lines, goals


def plain_django(reps: int, seconds: float) -> dict[str, float]:
    """The fixed view of a fresh startproject (bench/baseline.py), default middleware and
    none, timed the same way in processes of their own: name -> ms CPU per request."""
    import shutil

    from bench import baseline

    directory = baseline.make(Path(tempfile.mkdtemp(prefix="vs-baseline-", dir="/tmp")))
    try:
        return {
            f"plain Django fixed view, {name} (fresh startproject, own process)": statistics.median(
                baseline.measure_in_process(directory, settings, reps=reps, seconds=seconds)
            )
            * 1000
            for name, settings in (
                ("default middleware", baseline.DEFAULT),
                ("no middleware", baseline.BARE),
            )
        }
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def run(report: Any, opts: Any, group: str) -> None:
    """The cases in the full run (bench/run.py), on its main store: a section with the
    table, and one goal per request."""
    from django.core.management import call_command
    from django.test import override_settings

    from bench.report import log

    call_command("migrate", database="default", verbosity=0, interactive=False)
    with override_settings(**LIFTED_LIMITS):
        cases = build(articles=opts.articles, group=group)
        problems = check(cases)
        if problems:
            raise RuntimeError("; ".join(problems))
        log("timing the pages and endpoints in-process")
        measure(cases, reps=opts.reps, seconds=opts.seconds)
    plain = plain_django(opts.reps, opts.seconds)
    lines, goals = table(cases, plain)
    report.section(
        "Pages and endpoints in-process (Django test client), CPU per request",
        [
            f"{opts.articles:,} articles; each request's CPU time in this process (median of "
            f"{opts.reps} interleaved batches) beside the bare JSON view's in the same run. "
            "Anonymous listing pages are served from the 2 s anonymous page cache after the "
            "first request, but for the rows marked page cache off (rendered every time, as "
            "the goals ask); logged-in pages are rendered every time, from rows kept per "
            "article version. The bare view is votesite's (its whole middleware); plain Django "
            "is a fresh `django-admin startproject` serving the same body through its own WSGI "
            "handler, timed the same way in its own process just after (bench/baseline.py).",
            "",
            *lines,
        ],
    )
    for name, ratio, limit, _ in goals:
        report.goal(f"in-process {name}: CPU vs bare view", ratio, limit, at_most=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--articles", type=int, default=20_000)
    parser.add_argument("--seconds", type=float, default=0.3)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--only", default="", help="only the cases whose name holds this")
    args = parser.parse_args()
    directory = scratch_site("vs-pages-")
    import django

    django.setup()
    from django.core.management import call_command
    from django.test import override_settings
    from django_redis import get_redis_connection

    from bench import data, servers

    server = servers.redis_server(directory / "redis")
    server.start()
    try:
        spec = data.Spec(articles=args.articles, group_size=args.articles // 10, now=time.time())
        data.load_redis(get_redis_connection("articles"), spec)
        call_command("migrate", verbosity=0)
        with override_settings(**LIFTED_LIMITS):
            cases = build(articles=args.articles, group=spec.groups)
            cases = [cases[0], *(c for c in cases[1:] if args.only in c.name)]
            problems = check(cases)
            if problems:
                raise SystemExit("\n".join(problems))
            measure(cases, reps=args.reps, seconds=args.seconds)
        lines, _ = table(cases, plain_django(args.reps, args.seconds))
        print("\n".join(lines))
    finally:
        server.stop()
        servers.remove(directory)


if __name__ == "__main__":
    main()
