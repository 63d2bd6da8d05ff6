"""Lighthouse's accessibility, best-practices and SEO scores of the front page, the Top page
and an article page, with its mobile and desktop settings: each 100 (one target under 24 px
took the desktop accessibility score to 96). Lighthouse (tools/lighthouse, pinned by its
lock file; `make lighthouse` installs it) drives Debian's Chromium against the test's live
server; the reports and the figures go to test-artifacts/lighthouse/."""

from __future__ import annotations

import json
import os
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from django.urls import reverse

from articles.store import services
from articles.types import NewPost, Vote
from tests import factories
from tests.actors import staff_actor
from tests.browser.conftest import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LIGHTHOUSE = Path(__file__).resolve().parents[2] / "tools/lighthouse/node_modules/.bin/lighthouse"
CATEGORIES = ("accessibility", "best-practices", "seo")
LEAST = 1.0
# Lighthouse's default is a phone (a Moto G Power's screen); "desktop" is its 1350 px preset.
PRESETS = ("mobile", "desktop")
REPORTS = ARTIFACTS / "lighthouse"


@pytest.fixture(autouse=True)
def _site(settings) -> None:  # type: ignore[no-untyped-def]
    settings.ARTICLES_GOOD_ARTICLE_VOTES = 3


def seed() -> int:
    """A dozen articles, one good, one a text post with votes: the id of the text post."""
    carol = factories.user("carol", password="pw-lighthouse-2026")
    services.group_create(
        name="redis", description="The data structure server.", actor=staff_actor()
    )
    now = time.time()
    ids = []
    for n in range(12):
        ids.append(
            services.article_post(
                NewPost(
                    user_id=carol.pk,
                    poster_name="carol",
                    title=f"Article number {n}: sorted sets, scripts and small tools",
                    link=f"https://example.org/post-{n}" if n % 2 else "",
                    text="" if n % 2 else "Voting on articles with sorted sets.\n\nTwo paragraphs.",
                    groups=["redis"] if n % 3 else [],
                    now=now - 1800 * (n + 1),
                )
            ).id
        )
    for voter in range(100, 104):
        services.article_vote(article_id=ids[0], user_id=voter, direction=Vote.UP)
    return ids[0]


def audit(url: str, preset: str, name: str) -> dict[str, Any]:
    """One Lighthouse run: its report, saved as test-artifacts/lighthouse/<name>.json."""
    report = REPORTS / f"{name}.json"
    command = [
        str(LIGHTHOUSE),
        url,
        f"--only-categories={','.join(CATEGORIES)}",
        f"--chrome-flags={' '.join(CHROMIUM_ARGS)}",
        "--output=json",
        f"--output-path={report}",
        "--quiet",
    ]
    if preset == "desktop":
        command.append("--preset=desktop")
    subprocess.run(
        command,
        env={**os.environ, "CHROME_PATH": CHROMIUM},
        check=True,
        timeout=120,
        capture_output=True,
    )
    loaded: dict[str, Any] = json.loads(report.read_text())
    return loaded


def failing(report: dict[str, Any], category: str) -> list[str]:
    """The audits of a category that did not pass, to say why a score is short."""
    audits = report["audits"]
    return [
        f"{ref['id']} ({audits[ref['id']]['score']}): {audits[ref['id']]['title']}"
        for ref in report["categories"][category]["auditRefs"]
        if audits[ref["id"]]["score"] is not None and audits[ref["id"]]["score"] < 1
    ]


def test_home_top_and_article_score_at_least_95_in_lighthouse(live_server) -> None:
    if not os.access(LIGHTHOUSE, os.X_OK):
        pytest.fail(f"Lighthouse is missing at {LIGHTHOUSE}: run `make lighthouse`.")
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"Lighthouse needs Debian's chromium at {CHROMIUM}: run `make browser`.")
    article = seed()
    REPORTS.mkdir(parents=True, exist_ok=True)
    pages = {
        "home": reverse("articles:home"),
        "top": reverse("articles:top"),
        "article": reverse("articles:article-detail", args=[article]),
    }
    runs = [
        (f"{page}-{preset}", path, preset) for page, path in pages.items() for preset in PRESETS
    ]
    # Two runs at a time: most of a run is Lighthouse waiting for the page to settle.
    with ThreadPoolExecutor(max_workers=2) as pool:
        done = pool.map(lambda run: audit(live_server.url + run[1], run[2], run[0]), runs)
        reports = {name: (path, report) for (name, path, _), report in zip(runs, done, strict=True)}
    figures: dict[str, dict[str, float]] = {}
    problems = []
    for name, (path, report) in reports.items():
        assert report["finalDisplayedUrl"] == live_server.url + path
        assert not report.get("runtimeError"), report["runtimeError"]
        scores = {c: report["categories"][c]["score"] for c in CATEGORIES}
        figures[name] = {**scores, "seconds": round(report["timing"]["total"] / 1000, 1)}
        for category, score in scores.items():
            if score is None or score < LEAST:
                problems.append(f"{name} {category} {score}: {failing(report, category)}")
    (REPORTS / "scores.json").write_text(json.dumps(figures, indent=1))
    assert not problems, "\n".join(problems)
