"""The app's Jinja2 environment against Django's Jinja2 backend around the same environment,
and what the host's context processors cost: the home listing (25 articles) and an
article page with comments, each rendered in-process from the context its view built
(captured once through the test client), median CPU microseconds of many renders.

    python -m bench.templates [--comments 100] [--seconds 0.5] [--reps 9]

Each variant's page is checked to equal the app's own (the CSRF tokens aside) first.
"""

from __future__ import annotations

import argparse
import difflib
import random
import re
import statistics
import time
from collections.abc import Callable
from typing import Any

from bench import scratch_site

# Django's `startproject` settings list these; votesite's three are its own TEMPLATES'.
STARTPROJECT_PROCESSORS = [
    "django.template.context_processors.debug",
    "django.template.context_processors.request",
    "django.contrib.auth.context_processors.auth",
    "django.contrib.messages.context_processors.messages",
]
CSRF = re.compile(r'(name="csrfmiddlewaretoken" value=")[^"]+"')
# An age ("now", "2 seconds ago") is a <time>'s text: a second may pass between two renders.
AGE = re.compile(r"(<time [^>]*>)[^<]*(</time>)")
# The live element's render time (livepage): milliseconds apart between two renders.
SINCE = re.compile(r'( data-live-since=")\d+"')


def same(page: str) -> str:
    """`page` without what differs from one render to the next (tokens, ages)."""
    return SINCE.sub(r"\1", AGE.sub(r"\1\2", CSRF.sub(r"\1", page)))


def backend_environment(**options: Any) -> Any:
    """Django's Jinja2 backend's OPTIONS["environment"]: the app's own environment (same
    loader, globals, filters, finalize), not one made of the backend's options."""
    from articles.web import rendering

    return rendering.environment()


def csrf_once(request: Any) -> dict[str, Any]:
    """A context processor giving the backend the app's once-a-page CSRF values (its own
    are lazy objects computed again at every use: a form on every row)."""
    import functools

    from django.middleware.csrf import get_token
    from django.template.backends.utils import csrf_input

    from articles.web.rendering import _Once

    return {
        "csrf_input": _Once(functools.partial(csrf_input, request)),
        "csrf_token": _Once(functools.partial(get_token, request)),
    }


def captured(client: Any, path: str) -> tuple[str, dict[str, Any], Any]:
    """The template, context and request of the page at `path`, as its view rendered it."""
    from articles.web import rendering, rows

    seen: list[tuple[str, dict[str, Any], Any]] = []
    original = rendering.render_to_string

    def keep(name: Any, context: Any = None, request: Any = None, **kw: Any) -> str:
        # Without render()'s splice: each variant renders the whole page as text.
        seen.append((name, {k: v for k, v in (context or {}).items() if k != rows.SPLICE}, request))
        return original(name, context, request, **kw)

    rendering.render_to_string = keep  # type: ignore[assignment]
    try:
        status = client.get(path).status_code
    finally:
        rendering.render_to_string = original  # type: ignore[assignment]
    assert status == 200 and seen, (path, status)
    return seen[-1]


def variants(name: str, context: dict[str, Any], request: Any) -> dict[str, Callable[[], str]]:
    from django.contrib.messages import get_messages
    from django.template.backends.jinja2 import Jinja2

    from articles.web import livepage, rendering

    def backend(processors: list[str]) -> Any:
        return Jinja2(
            {
                "NAME": "articles-jinja2",
                "DIRS": [],
                "APP_DIRS": False,
                "OPTIONS": {
                    "environment": f"{__name__}.backend_environment",
                    "context_processors": processors,
                },
            }
        )

    once = f"{__name__}.csrf_once"
    plain, once_only = backend([]), backend([once])
    processed = backend([*STARTPROJECT_PROCESSORS, once])

    def through(engine: Any) -> Callable[[], str]:
        def render() -> str:
            # What the app adds to the backend's request/csrf values: the user (resolved),
            # the messages, the header's unread count and the page's live query; the view's
            # context last, as the app gives it.
            values = {
                "user": rendering._resolved(request.user),
                "messages": get_messages(request),
                "inbox_unread": lambda: rendering._inbox_unread(request),
                **livepage.context_values(),
                **context,
            }
            return str(engine.get_template(name).render(values, request))

        return render

    def app(processors: bool) -> Callable[[], str]:
        return lambda: rendering.render_to_string(name, context, request, processors=processors)

    return {
        "app environment, no processors (before)": app(False),
        "app environment + votesite's processors": app(True),
        "Django Jinja2 backend, no processors": through(plain),
        "Django Jinja2 backend + csrf once": through(once_only),
        "Django Jinja2 backend + csrf once + startproject's 4": through(processed),
    }


def timed(render: Callable[[], str], renders: int) -> float:
    """CPU microseconds a render, over `renders` renders (CPU time: the machine's other
    processes slow the wall clock far more)."""
    start = time.process_time()
    for _ in range(renders):
        render()
    return (time.process_time() - start) / renders * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--comments", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=0.5, help="a variant's round")
    parser.add_argument("--reps", type=int, default=9)
    args = parser.parse_args()
    directory = scratch_site("vs-tpl-")
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.test import Client
    from django.utils.module_loading import import_string
    from django_redis import get_redis_connection

    from bench import comments, data, servers

    server = servers.redis_server(directory / "redis")
    server.start()
    try:
        spec = data.Spec(articles=200, group_size=20, now=time.time())
        data.load_redis(get_redis_connection("articles"), spec)
        call_command("migrate", verbosity=0)
        reader = get_user_model().objects.create_user("reader", password="x-Secret-123")
        comments.post_thread(1, args.comments, random.Random(5), time.time())
        client = Client(HTTP_HOST="127.0.0.1")
        client.force_login(reader)
        processors = settings.TEMPLATES[0]["OPTIONS"]["context_processors"]
        print(f"host processors: {', '.join(p.rsplit('.', 1)[-1] for p in processors)}")
        print(f"{args.reps} rounds of ~{args.seconds} s each, median CPU µs a render\n")
        print("| variant | home, 25 articles | article, " + f"{args.comments} comments |")
        print("|---|---|---|")
        results: dict[str, list[float]] = {}
        for path in ("/", "/a/1/"):
            name, context, request = captured(client, path)
            cases = variants(name, context, request)
            expected = same(next(iter(cases.values()))())
            for label, render in cases.items():
                got = same(render())
                if got != expected:
                    lines = difflib.unified_diff(expected.splitlines(), got.splitlines())
                    raise SystemExit(f"{label}: another page\n" + "\n".join(list(lines)[:20]))
            renders = max(10, int(args.seconds * 1e6 / timed(cases[next(iter(cases))], 5)))
            rounds: dict[str, list[float]] = {label: [] for label in cases}
            for render in cases.values():  # warm: compiled, caches filled
                timed(render, renders // 4 + 1)
            for _ in range(args.reps):  # interleaved: the machine's drift hits each alike
                for label, render in cases.items():
                    rounds[label].append(timed(render, renders))
            for label, figures in rounds.items():
                results.setdefault(label, []).append(statistics.median(figures))
        for label, (home, detail) in results.items():
            print(f"| {label} | {home:.0f} | {detail:.0f} |")
        request = captured(client, "/")[2]
        print("\n| the context processors alone | CPU µs a page |\n|---|---|")
        lists = (("votesite's 3", processors), ("startproject's 4", STARTPROJECT_PROCESSORS))
        for label, paths in lists:
            called = [import_string(path) for path in paths]

            def run(called: list[Any] = called) -> str:
                values: dict[str, Any] = {}
                for processor in called:
                    values.update(processor(request))
                return ""

            figure = statistics.median(timed(run, 20_000) for _ in range(args.reps))
            print(f"| {label} | {figure:.1f} |")
    finally:
        server.stop()
        servers.remove(directory)


if __name__ == "__main__":
    main()
