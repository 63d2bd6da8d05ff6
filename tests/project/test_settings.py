"""The settings helpers: Redis URLs for the cache database, environment parsing."""

import pytest
import redis
from django.core.exceptions import ImproperlyConfigured

from votesite.settings import env_bool, with_db


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("unix:///var/run/redis.sock?db=0", "unix:///var/run/redis.sock?db=1"),
        ("unix:///var/run/redis.sock", "unix:///var/run/redis.sock?db=1"),
        ("redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/1"),
        ("redis://:secret@host:6380", "redis://:secret@host:6380/1"),
    ],
)
def test_the_cache_database_is_the_same_server_one_database_up(url, expected):
    assert with_db(url, 1) == expected


def test_the_embedded_cache_url_is_one_redis_py_accepts(redis_server):
    client = redis.Redis.from_url(with_db(f"{redis_server.url}?db=0", 1))
    assert client.ping()
    assert client.connection_pool.connection_kwargs["db"] == 1


def test_env_bool_refuses_what_it_cannot_read(monkeypatch):
    monkeypatch.setenv("X_FLAG", "maybe")
    with pytest.raises(ImproperlyConfigured):
        env_bool("X_FLAG")
    monkeypatch.setenv("X_FLAG", "Yes")
    assert env_bool("X_FLAG") is True


def _settings_in_subprocess(tmp_path, code: str, **env: str) -> str:  # type: ignore[no-untyped-def]
    import os
    import subprocess
    import sys

    environ = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")}
    environ.update(
        VOTESITE_VAR_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE="votesite.settings", **env
    )
    run = subprocess.run(
        [sys.executable, "-c", f"from django.conf import settings as s; print({code})"],
        env=environ,
        capture_output=True,
        text=True,
        check=True,
    )
    return run.stdout.strip()


def test_hsts_include_subdomains_and_preload_are_each_their_own_choice_off_by_default(tmp_path):
    code = "s.SECURE_HSTS_SECONDS, s.SECURE_HSTS_INCLUDE_SUBDOMAINS, s.SECURE_HSTS_PRELOAD"
    hsts = {"DJANGO_SECURE_HSTS_SECONDS": "31536000"}
    assert _settings_in_subprocess(tmp_path, code, **hsts) == "31536000 False False"
    both = {"DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS": "true", "DJANGO_SECURE_HSTS_PRELOAD": "yes"}
    assert _settings_in_subprocess(tmp_path, code, **hsts, **both) == "31536000 True True"
    only = {"DJANGO_SECURE_HSTS_PRELOAD": "true"}
    assert _settings_in_subprocess(tmp_path, code, **hsts, **only) == "31536000 False True"
