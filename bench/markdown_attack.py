"""CPU exhaustion through Markdown, measured: the site under gunicorn (gunicorn.conf.py,
2 workers) on a throwaway Redis, with 50 pathological comments (10,000 characters of
`[<` or `*[`<`, from two accounts) on one article and 20 text posts of 20,000 characters.
One client first fetches each feed and the API thread 3 times (the first fetches render);
then 12 anonymous readers fetch the feeds for DURATION seconds while one more client
times `/new/`. Prints the median and p99 of each path and its statuses.

    .venv/bin/python -m bench.markdown_attack [--site DIR] [--addresses one|many]

--site: the checkout whose code gunicorn serves (default: this one), e.g. an export of
main for the "before" figures. --addresses many: each request comes from another client
address (X-Forwarded-For, one trusted proxy), so the feed rate limit, per address, does
not stop them and only the rendering's own bounds are measured. Loopback only, bounded
in time (DURATION seconds of new requests, each with a 120 s timeout; status 0: no answer by then).
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

from articles.types import NewPost

BASE = Path(__file__).resolve().parents[1]
READERS = 12
DURATION = 10.0
COMMENTS = 50
TEXT_POSTS = 20
_FAILURES: set[str] = set()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _get(url: str, address: str | None) -> tuple[int, float]:
    headers = {"X-Forwarded-For": address} if address else {}
    request = urllib.request.Request(url, headers=headers)  # noqa: S310 (loopback)
    start = time.perf_counter()
    try:
        with urllib.request.urlopen(request, timeout=120) as response:  # noqa: S310
            response.read()
            status = response.status
    except urllib.error.HTTPError as error:
        error.read()
        status = error.code
    except (TimeoutError, urllib.error.URLError, ConnectionError) as error:
        status = 0  # no answer within the timeout
        _FAILURES.add(repr(error)[:120])
    return status, time.perf_counter() - start


def _seed(redis_url: str, directory: Path) -> int:
    """The attack's data, written with the store's own services; the article's id."""
    os.environ["REDIS_URL"] = redis_url
    os.environ["VOTESITE_VAR_DIR"] = str(directory)
    os.environ["DJANGO_DEBUG"] = "true"  # this process only writes to the store
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "votesite.settings")
    sys.path.insert(0, str(BASE))
    import django

    django.setup()
    from articles.store import services

    for i in range(TEXT_POSTS):
        services.article_post(
            NewPost(
                user_id=1 + i % 2,
                poster_name=f"attacker{1 + i % 2}",
                title=f"Post {i}",
                link="",
                text=(f"{i} " + "[<" * 10_000)[:20_000],
            )
        )
    target = services.article_post(
        NewPost(user_id=3, poster_name="victim", title="Target", link="https://example.org/")
    )
    for i in range(COMMENTS):
        shape = "[<" * 5_000 if i % 2 else "*[`<" * 2_500
        services.comment_post(
            article_id=target.id,
            user_id=1 + i % 2,
            author_name=f"attacker{1 + i % 2}",
            text=(f"{i} " + shape)[:10_000],
        )
    return target.id


def _serve(site: Path, redis_url: str, directory: Path, many: bool) -> tuple[subprocess.Popen, str]:
    port = _free_port()
    env = dict(
        os.environ,
        DJANGO_SETTINGS_MODULE="votesite.settings",
        DJANGO_DEBUG="false",
        DJANGO_SECRET_KEY="bench-only-secret-key-that-is-long-enough-0123456789abcdefghij",
        DJANGO_ALLOWED_HOSTS="127.0.0.1",
        DATABASE_URL=f"sqlite:///{directory / 'db.sqlite3'}",
        REDIS_URL=redis_url,
        VOTESITE_VAR_DIR=str(directory),
        DJANGO_NUM_PROXIES="1" if many else "0",
    )
    env.pop("DJANGO_STATIC_MANIFEST", None)
    gunicorn = Path(sys.executable).with_name("gunicorn")
    process = subprocess.Popen(
        [
            *(str(gunicorn), "votesite.wsgi:application", "--config", "gunicorn.conf.py"),
            *("--bind", f"127.0.0.1:{port}", "--workers", "2"),
            *("--log-level", "warning", "--access-logfile", "/dev/null"),
        ],
        env=env,
        cwd=site,
        stdout=subprocess.DEVNULL,
        stderr=(directory / "gunicorn.log").open("wb"),
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while _get(f"{base}/healthz", None)[0] != 200:
        if process.poll() is not None or time.monotonic() > deadline:
            raise SystemExit((directory / "gunicorn.log").read_text())
        time.sleep(0.2)
    _FAILURES.clear()
    return process, base


def _summary(samples: list[tuple[int, float]]) -> str:
    if not samples:
        return "no answer"
    times = sorted(t for _, t in samples)
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
    statuses: dict[int, int] = {}
    for status, _ in samples:
        statuses[status] = statuses.get(status, 0) + 1
    ok = sorted(t for s, t in samples if s == 200)
    ok_part = f", 200s median {statistics.median(ok) * 1000:.0f} ms" if ok else ""
    return (
        f"n={len(times)} median {statistics.median(times) * 1000:.0f} ms "
        f"p99 {p99 * 1000:.0f} ms statuses {dict(sorted(statuses.items()))}{ok_part}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, default=BASE)
    parser.add_argument("--addresses", choices=["one", "many"], default="one")
    opts = parser.parse_args()
    many = opts.addresses == "many"
    sys.path.insert(0, str(BASE))
    from articles.operations.embedded import EmbeddedRedis

    with tempfile.TemporaryDirectory(prefix="mdatk-", dir="/tmp") as tmp:
        directory = Path(tmp)
        redis = EmbeddedRedis(directory, daemonize=False)
        redis.start()
        process = None
        try:
            redis_url = f"{redis.url}?db=0"
            article_id = _seed(redis_url, directory)
            process, base = _serve(opts.site.resolve(), redis_url, directory, many)
            paths = [
                f"/feeds/a/{article_id}/comments/",
                "/feeds/new/",
                "/feeds/top/",
                f"/api/articles/{article_id}/comments/",
            ]
            print(f"site {opts.site}, addresses {opts.addresses}")
            for path in paths:  # one client: the first fetches (either worker may answer)
                times = [_get(base + path, None)[1] * 1000 for _ in range(3)]
                shown = path.replace(str(article_id), "<id>")
                print(
                    f"  one client, 3 fetches of {shown:30} "
                    + " ".join(f"{t:.0f}" for t in times)
                    + " ms"
                )
            samples: dict[str, list[tuple[int, float]]] = {p: [] for p in [*paths[:3], "/new/"]}
            lock = threading.Lock()
            until = time.monotonic() + DURATION

            def fire(offset: int, rota: list[str]) -> None:
                n = offset
                while time.monotonic() < until:
                    path = rota[n % len(rota)]
                    n += 1
                    address = f"10.{random.randrange(256)}.{random.randrange(256)}.{n % 250 + 1}"
                    result = _get(base + path, address if many else None)
                    with lock:
                        samples[path].append(result)

            threads = [
                threading.Thread(target=fire, args=(i, paths[:3]), daemon=True)
                for i in range(READERS)
            ]
            threads.append(threading.Thread(target=fire, args=(0, ["/new/"]), daemon=True))
            started = time.monotonic()
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(DURATION + 240)
            print(
                f"site {opts.site}, addresses {opts.addresses}, {READERS} readers, "
                f"{time.monotonic() - started:.1f} s with the last answers"
            )
            for path, found in samples.items():
                shown = path.replace(str(article_id), "<id>")
                print(f"  {shown:32} {_summary(found)}")
            if _FAILURES:
                print("no answer:", *sorted(_FAILURES)[:5], sep="\n  ")
            log = (directory / "gunicorn.log").read_text().strip().splitlines()
            if log:
                other = [line for line in log if "votesite.requests" not in line]
                print("gunicorn's log, other than requests:", *other[-12:], sep="\n  ")
        finally:
            if process is not None:
                os.killpg(process.pid, signal.SIGTERM)
                try:
                    process.wait(15)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
            redis.stop()


if __name__ == "__main__":
    main()
