"""The benchmark suite (`make bench`); see bench/run.py."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def scratch_site(prefix: str, **extra: str) -> Path:
    """A temporary folder for an in-process bench's site (its Redis socket and var/), with
    the environment bench.settings reads pointed at it, before django.setup(); `extra`
    are more environment values. Production settings refuse to start without a secret."""
    directory = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    (directory / "var").mkdir()
    sock = directory / "redis" / "redis.sock"
    os.environ.update(
        BENCH_DIR=str(directory),
        REDIS_URL=f"unix://{sock}?db=0",
        REDIS_CACHE_URL=f"unix://{sock}?db=1",
        VOTESITE_VAR_DIR=str(directory / "var"),
        DJANGO_SETTINGS_MODULE="bench.settings",
        DJANGO_SECRET_KEY="bench-" + "x" * 50,
        **extra,
    )
    return directory
