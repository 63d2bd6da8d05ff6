"""`manage.py check --deploy --fail-level WARNING` passes with the production settings
documented in the README (## Reliability), and fails without them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from articles.operations.embedded import EmbeddedRedis

# Each test ends with the invariant audit finding nothing on the session's store.
pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("audited")]
BASE = Path(__file__).resolve().parents[2]

PRODUCTION = {
    "DJANGO_SECRET_KEY": "x7Qp2-Lk9vWm4Zr8Tn3Hs6Yb1Jc5Fd0Ge7Ua2Xo9Pi4Qw8Er3Ty6",
    "DJANGO_DEBUG": "false",
    "DJANGO_ALLOWED_HOSTS": "votesite.example.com",
    "DJANGO_CSRF_TRUSTED_ORIGINS": "https://votesite.example.com",
    "DJANGO_SECURE_COOKIES": "true",
    "DJANGO_SECURE_SSL_REDIRECT": "true",
    "DJANGO_SECURE_HSTS_SECONDS": "31536000",
    "DJANGO_BEHIND_PROXY": "true",
    "EMAIL_HOST": "smtp.example.org",  # else votesite.E001: reset links would go nowhere
}


def _check(redis_server: EmbeddedRedis, tmp_path: Path, **env: str):
    environ = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DJANGO_", "REDIS_")) and k != "DATABASE_URL"
    }
    environ.update(VOTESITE_VAR_DIR=str(tmp_path), REDIS_URL=f"{redis_server.url}?db=0", **env)
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=BASE,
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_deploy_check_passes_with_the_documented_production_settings(redis_server, tmp_path):
    result = _check(redis_server, tmp_path, **PRODUCTION)
    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout


def test_deploy_check_fails_with_the_development_defaults(redis_server, tmp_path):
    result = _check(redis_server, tmp_path, DJANGO_SECRET_KEY=PRODUCTION["DJANGO_SECRET_KEY"])
    assert result.returncode != 0
    assert "security.W004" in result.stderr  # no HSTS
    assert "security.W008" in result.stderr  # no SSL redirect
