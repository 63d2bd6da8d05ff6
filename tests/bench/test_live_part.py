"""The live part of the benchmark (bench/live.py) on tiny numbers: one uvicorn worker under
gunicorn.live.conf.py holds every stream with its heartbeats, on one Redis subscription and
a few threads, and every vote reaches every client once; its block of docs/performance.md
is rewritten alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import live
from bench.report import LIVE, MAIN, Report, write_report

pytestmark = pytest.mark.slow


def test_the_live_part_on_tiny_numbers(tmp_path: Path) -> None:
    report = Report()
    sizes = live.Sizes.smoke()
    figures = live.run(report, sizes)
    idle, fanout = figures["idle"], figures["fanout"]
    assert idle["held"] == idle["beating"] == sizes.idle
    # The streams share the worker's few threads: one each, before, was 41 threads here.
    assert idle["threads"] < 16, idle
    assert idle["redis_hub"] == idle["redis_blocked"] == 1  # one reader for every client
    assert idle["rss_after_kib"] > idle["rss_before_kib"] > 0
    assert fanout["votes"] == sizes.votes
    assert (fanout["missing"], fanout["duplicates"], fanout["dropped"]) == (0, 0, 0)
    assert 0 < fanout["p50_ms"] <= fanout["p99_ms"] <= fanout["max_ms"]
    assert report.parts() == [LIVE]
    page = tmp_path / "performance.md"
    page.write_text(f"# P\n\nprose\n\n<!-- {MAIN}:begin -->\nmain\n<!-- {MAIN}:end -->\n")
    write_report(page, report.markdown(LIVE), LIVE)
    text = page.read_text()
    assert "prose" in text and "\nmain\n" in text
    assert "| memory per idle stream" in text.split(f"<!-- {LIVE}:begin -->")[1]
    assert "live: vote -> 1,000 clients, p99 (ms)" in text
