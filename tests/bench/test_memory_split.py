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
    assert memory_split.family("links:3fa") == "links:<b>"


def test_comment_families_name_every_comment_key() -> None:
    named = memory_split.comment_family
    assert named("comment:5") == "comment hashes"
    assert named("comment:") == "comment hashes"  # the id counter, with them
    assert named("comments:") == "comments: (site-wide)"
    assert named("comments:5") == named("comments_new:5") == named("comments_all:5")
    assert named("replies:5") == named("replies_new:5") == "replies/replies_new:<cid>"
    assert named("comment_voted:5") == named("comment_voted_down:5")
    assert named("comment_postings:redis") == "comment_postings:<word>"
    assert named("inbox:5") == named("inbox_state:5")
    assert named("article:5") == "others"


def test_small_run_adds_up() -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.memory_split",
            "--articles",
            "400",
            "--vote-articles",
            "60",
            "--comments",
            "300",
            "--comment-articles",
            "30",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    out, comments = out.split("\nComments (")
    grown = int(re.search(r"used_memory grew ([\d,]+) B", out).group(1).replace(",", ""))
    rows = re.findall(r"^\| ([^|*]+?) \|[^|]*\|[^|]*\| ([\d,.-]+) \|", out, re.MULTILINE)
    parts = dict(rows)
    for name in ("article hashes", "score:", "votes:year", "voted:<id>", "postings:<word>"):
        assert float(parts[name].replace(",", "")) > 0, name
    total = sum(float(v.replace(",", "")) for v in parts.values()) * 400
    assert abs(total - grown) <= 1_000, (total, grown)
    assert "| one year | 36,500,000 | 70,000,000 |" in out
    per_comment = float(
        re.search(r"([\d,]+) B per comment all-in", comments).group(1).replace(",", "")
    )
    rows = dict(re.findall(r"^\| ([^|]+?) \|[^|]*\|[^|]*\| ([\d,.]+) \|", comments, re.MULTILINE))
    assert float(rows["comment hashes"]) > 0 and float(rows["comments: (site-wide)"]) > 0
    assert sum(float(v.replace(",", "")) for v in rows.values()) <= per_comment * 1.1
