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
