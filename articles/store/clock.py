"""The app's one clock, in Unix seconds.

Rules that hang on the voting window (may this vote count? when did this post happen?)
are decided inside the Lua scripts by Redis' own `TIME` (lua/_lib.lua `clock`), the
clock the voter sets expire by. This clock serves the rest: what pages show, log
entries, rate-limit windows, period listings. Two hooks move it: ARTICLES_CLOCK_OFFSET
(seconds, default 0) puts this process's clock ahead of or behind Redis', and `fix()`
stops it at a chosen time (the tests' `clock` fixture), so a test that counts in a
rate-limit window never waits for one to begin or end.
"""

from __future__ import annotations

import time

from django.utils.translation import ngettext

from articles import conf

# The time fix() stopped the clock at; None while it runs. One value for the whole
# process, so a live test server's threads read the time the test set.
_fixed: float | None = None


def now(given: float | None = None) -> float:
    """`given` when a caller (a test, a tool) fixes the time, else this process's clock."""
    if given is not None:
        return float(given)
    if _fixed is not None:
        return _fixed
    return time.time() + conf.clock_offset()


def fix(moment: float | None) -> None:
    """Stop the clock at `moment` (Unix seconds) until the next fix(); None lets it run."""
    global _fixed
    _fixed = None if moment is None else float(moment)


def in_words(seconds: int) -> str:
    """'in 44 minutes', 'in 2 hours', 'in 30 seconds': a wait a person can read (the one
    wording of every "try again" message; Retry-After headers keep the seconds)."""
    seconds = max(0, int(seconds))
    if seconds < 90:
        count = seconds
        words = ngettext("in %(count)d second", "in %(count)d seconds", count)
    elif seconds < 90 * 60:
        count = round(seconds / 60)
        words = ngettext("in %(count)d minute", "in %(count)d minutes", count)
    else:
        count = round(seconds / 3600)
        words = ngettext("in %(count)d hour", "in %(count)d hours", count)
    return words % {"count": count}
