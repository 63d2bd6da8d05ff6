"""The memory split runs end to end on a small store: each key goes to its family, every
large family is found, and the table's rows (families, bucket arrays, the rest) account
for all of used_memory's growth, so the per-article total is the one measured."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from bench import memory_split

ROOT = Path(__file__).resolve().parents[2]


def test_families_name_every_key_the_store_writes() -> None:
    assert memory_split.family("article:12") == "article hashes"
    assert memory_split.family("article:") == "others"  # the id counter
    assert memory_split.family("votes:") == "votes:"
    assert memory_split.family("votes:year") == "votes:year"
    assert memory_split.family("votes:periods") == "others"
    assert memory_split.family("voted:3") == "voted:<id>"
    assert memory_split.family("voted_down:3") == "voted_down:<id>"
    assert memory_split.family("postings:redis") == "postings:<word>"
    assert memory_split.family("comments_all:3") == "comments"


def test_small_run_adds_up() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "bench.memory_split", "--articles", "400", "--vote-articles", "60"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    grown = int(re.search(r"used_memory grew ([\d,]+) B", out).group(1).replace(",", ""))
    rows = re.findall(r"^\| ([^|*]+?) \|[^|]*\|[^|]*\| ([\d,.-]+) \|", out, re.MULTILINE)
    parts = dict(rows)
    for name in ("article hashes", "score:", "votes:year", "voted:<id>", "postings:<word>"):
        assert float(parts[name].replace(",", "")) > 0, name
    total = sum(float(v.replace(",", "")) for v in parts.values()) * 400
    assert abs(total - grown) <= 1_000, (total, grown)
    assert "| one year | 36,500,000 | 70,000,000 |" in out
