"""The live benchmark's settings (bench/live.py): votesite's production settings, with the
heartbeat's period from BENCH_LIVE_HEARTBEAT (seconds), so a short run sees several."""

from __future__ import annotations

import os

from votesite.settings import *  # noqa: F403

DEBUG = False
ARTICLES_LIVE_HEARTBEAT_SECONDS = float(os.environ.get("BENCH_LIVE_HEARTBEAT", "15"))
