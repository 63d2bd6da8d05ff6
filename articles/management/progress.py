"""Progress bars and timed summaries for the long management commands (tqdm, on stderr).

The bar shows only on a terminal (tqdm's disable=None), so logs and tests see the summary
line alone."""

from __future__ import annotations

import time
from typing import Any

from tqdm import tqdm


def bar(*, unit: str, total: int | None = None, desc: str = "") -> Any:
    return tqdm(total=total, unit=unit, desc=desc, disable=None, dynamic_ncols=True, leave=False)


class Timer:
    """Seconds since it was made, and a rate for the summary line."""

    def __init__(self) -> None:
        self.started = time.perf_counter()

    @property
    def seconds(self) -> float:
        return time.perf_counter() - self.started

    def summary(self, count: int, unit: str) -> str:
        seconds = self.seconds
        rate = f", {count / seconds:,.0f} {unit}/s" if seconds > 0 and count else ""
        return f"in {seconds:.2f} s{rate}"
