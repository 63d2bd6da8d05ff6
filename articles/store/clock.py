"""The app's one clock, in Unix seconds.

Rules that hang on the voting window (may this vote count? when did this post happen?)
are decided inside the Lua scripts by Redis' own `TIME` (lua/_lib.lua `clock`), the
clock the voter sets expire by. This clock serves the rest: what pages show, log
entries, rate-limit windows, period listings. ARTICLES_CLOCK_OFFSET (seconds, default 0)
shifts it: a test hook that puts this process's clock ahead of or behind Redis'.
"""

from __future__ import annotations

import time

from articles import conf


def now(given: float | None = None) -> float:
    """`given` when a caller (a test, a tool) fixes the time, else this process's clock."""
    return float(given) if given is not None else time.time() + conf.clock_offset()


def in_words(seconds: int) -> str:
    """'in 44 minutes', 'in 2 hours', 'in 30 seconds': a wait a person can read (the one
    wording of every "try again" message; Retry-After headers keep the seconds)."""
    seconds = max(0, int(seconds))
    if seconds < 90:
        return f"in {seconds} second{'s' if seconds != 1 else ''}"
    if seconds < 90 * 60:
        return f"in {round(seconds / 60)} minutes"
    hours = round(seconds / 3600)
    return f"in {hours} hour{'s' if hours != 1 else ''}"
