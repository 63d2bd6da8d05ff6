"""The honest baseline: plain Django, a project fresh from `django-admin startproject`, made
at run time with the venv's Django, serving the same fixed JSON as votesite's /bench/fixed/.

Its generated settings.py stays as Django wrote it (default MIDDLEWARE, apps, database);
two small settings modules beside it add only what serving needs (DEBUG off, loopback
hosts), and the second also empties MIDDLEWARE: the no-middleware reference. The one
addition to the generated urls.py is the fixed view, with no app.

    python -m bench.baseline [--seconds 0.3] [--reps 5]   # in-process CPU per request
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# The body of both projects' fixed view (bench/urls.py serves it in votesite).
FIXED = {"status": "ok", "items": [{"id": n, "title": "fixed"} for n in range(3)]}
ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "baseline"
PATH = "/bench/fixed/"
DEFAULT = f"{PACKAGE}.serving"  # the generated settings, served
BARE = f"{PACKAGE}.bare"  # the same with MIDDLEWARE = []

URLS_ADDITION = f"""

# Added for votesite's benchmark: the fixed view it divides by, with no app.
from django.http import JsonResponse  # noqa: E402

FIXED = {FIXED!r}


def fixed_json(request):
    return JsonResponse(FIXED)


urlpatterns += [path("bench/fixed/", fixed_json)]
"""

# The floors: the same project making a hot path's Redis round trips with redis-py alone,
# nothing of votesite's, as its developers would write them. What any Django view pays for
# that work on this machine: a goal's miss measured against what is left for our code.
FLOORS_ADDITION = """

# Added for votesite's benchmark: the floors, plain Django and redis-py on its store.
import os  # noqa: E402
import random  # noqa: E402

import redis  # noqa: E402
from django.http import HttpResponse  # noqa: E402
from django.template import engines  # noqa: E402

STORE = redis.Redis.from_url(os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))
ARTICLE = STORE.register_script("return redis.call('HGETALL', KEYS[1])")
ROWS = engines["django"].from_string(
    '<!doctype html><html lang="en"><title>Articles</title><ol>{% for a in articles %}'
    '<li><a href="{{ a.link }}">{{ a.title }}</a> {{ a.votes }} votes, by '
    '{{ a.poster }}</li>{% endfor %}</ol></html>'
)


def floor_one_round_trip(request):
    \"\"\"A vote's one round trip: one script call (a random article's hash), as JSON.\"\"\"
    top = int(request.GET.get("n", "1"))
    flat = ARTICLE(keys=[f"article:{random.randint(1, top)}"])
    return JsonResponse({flat[i].decode(): flat[i + 1].decode() for i in range(0, len(flat), 2)})


def book_listing():
    \"\"\"The book's get_articles: page 1 of score: and its 25 hashes (two round trips).\"\"\"
    members = STORE.zrevrange("score:", 0, 24)
    pipe = STORE.pipeline(transaction=False)
    for member in members:
        pipe.hgetall(member)
    return [{k.decode(): v.decode() for k, v in h.items()} for h in pipe.execute()]


def floor_listing(request):
    \"\"\"The book's listing through a Django template.\"\"\"
    return HttpResponse(ROWS.render({"articles": book_listing()}))


def floor_json(request):
    \"\"\"The book's listing as JSON.\"\"\"
    return JsonResponse({"results": book_listing()})


urlpatterns += [
    path("bench/floor/one/", floor_one_round_trip),
    path("bench/floor/listing/", floor_listing),
    path("bench/floor/listing.json", floor_json),
]
"""

# The floors' names and addresses, as bench.http times them (the one-call floor is given
# ?n=<articles>: the ids it picks from).
FLOORS = (
    ("one Redis script call (a random article's hash) as JSON", "/bench/floor/one/"),
    ("the book's listing (ZREVRANGE, 25 HGETALL) in a template", "/bench/floor/listing/"),
    ("the book's listing (ZREVRANGE, 25 HGETALL) as JSON", "/bench/floor/listing.json"),
)

SERVING = f"""from {PACKAGE}.settings import *  # noqa: F403

DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
"""

NO_MIDDLEWARE = f"""from {PACKAGE}.serving import *  # noqa: F403

MIDDLEWARE = []
"""


def django_admin() -> list[str]:
    """The venv's django-admin (this interpreter's Django)."""
    script = Path(sys.executable).with_name("django-admin")
    return [str(script)] if script.exists() else [sys.executable, "-m", "django"]


def make(directory: Path) -> Path:
    """A fresh `django-admin startproject baseline` in `directory` (made if missing), plus
    the serving settings and the fixed view; returns `directory`."""
    directory.mkdir(parents=True, exist_ok=True)
    subprocess.run([*django_admin(), "startproject", PACKAGE, str(directory)], check=True)
    package = directory / PACKAGE
    with (package / "urls.py").open("a") as urls:
        urls.write(URLS_ADDITION)
        urls.write(FLOORS_ADDITION)
    (package / "serving.py").write_text(SERVING)
    (package / "bare.py").write_text(NO_MIDDLEWARE)
    return directory


def environ(directory: Path, settings: str) -> dict[str, str]:
    """This process's environment with the baseline project importable and `settings` on;
    the harness's own settings module and paths are left out."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "BENCH_"))}
    env["DJANGO_SETTINGS_MODULE"] = settings
    env["PYTHONPATH"] = str(directory)
    return env


def measure_in_process(
    directory: Path, settings: str, *, reps: int, seconds: float, timeout: float = 300
) -> list[float]:
    """CPU seconds per request of the fixed view, through Django's test client (the project's
    own WSGI handler and middleware) in a process of its own, as bench.pages times a case:
    `reps` batches of `seconds` of CPU after a warm-up. Its own process: Django's settings
    are one per process."""
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.baseline",
            "--inside",
            "--reps",
            str(reps),
            "--seconds",
            str(seconds),
        ],
        env={**environ(directory, settings), "PYTHONPATH": f"{directory}{os.pathsep}{ROOT}"},
        cwd=directory,
        capture_output=True,
        text=True,
        check=True,
        timeout=timeout,
    ).stdout
    return [float(x) for x in json.loads(out.strip().splitlines()[-1])]


def _inside(reps: int, seconds: float) -> list[float]:
    import django

    django.setup()
    from django.test import Client

    client = Client(HTTP_HOST="127.0.0.1")
    response = client.get(PATH)
    if response.status_code != 200 or json.loads(response.content) != FIXED:
        raise SystemExit(f"baseline view answers {response.status_code}: {response.content!r}")
    for _ in range(5):
        client.get(PATH)
    cpu = []
    for _ in range(reps):
        spent, calls = 0.0, 0
        while spent < seconds or calls < 3:
            start = time.process_time()
            client.get(PATH)
            spent += time.process_time() - start
            calls += 1
        cpu.append(spent / calls)
    return cpu


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seconds", type=float, default=0.3)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.inside:
        print(json.dumps(_inside(args.reps, args.seconds)))
        return
    directory = make(Path(tempfile.mkdtemp(prefix="vs-baseline-", dir="/tmp")))
    try:
        for name, settings in (("default middleware", DEFAULT), ("no middleware", BARE)):
            cpu = measure_in_process(directory, settings, reps=args.reps, seconds=args.seconds)
            print(f"plain Django, {name}: {statistics.median(cpu) * 1000:.3f} ms CPU/request")
    finally:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
