"""bench.vote_cpu times a token vote (answered 200 by the lean path) beside the fixed view,
and splits the vote into its steps."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-m", "bench.vote_cpu", "--articles", "50", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    ).stdout
    found: dict[str, float] = json.loads(out.strip().splitlines()[-1])
    return found


@pytest.mark.slow
def test_the_vote_and_the_fixed_view_are_timed() -> None:
    found = _run("--reps", "1", "--calls", "5")
    assert set(found) == {"vote", "fixed"}
    assert all(value > 0 for value in found.values())


@pytest.mark.slow
def test_the_parts_are_each_within_the_whole_vote() -> None:
    found = _run("--parts", "20")
    whole = found.pop("whole vote")
    assert "vote: redis-py execute_command" in found and "URL resolving" in found
    assert all(0 < value <= whole for value in found.values())
