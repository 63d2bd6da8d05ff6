"""check_votes and --repair on bad data: every problem the audit can see is reported and
the audit goes on (no crash on WRONGTYPE, NaN or a time EXPIREAT refuses); a repair never
destroys what is still known elsewhere, and leaves (and reports) what it cannot mend."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from articles.operations import audit
from articles.store import services
from tests import factories
from tests.actors import staff_actor


def run(*args: str) -> tuple[str, CommandError | None]:
    out = StringIO()
    try:
        call_command("check_votes", *args, stdout=out)
    except CommandError as exc:
        return out.getvalue(), exc
    return out.getvalue(), None


def post(n: int, now: float) -> None:
    factories.article(1, f"T{n}", f"https://e.org/{n}", now=now, poster_name="a")


def kinds() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for problem in audit.invariant_audit():
        where = str(problem.entry or problem.article_id or problem.group)
        found.setdefault(problem.kind, set()).add(where)
    return found


@pytest.mark.parametrize(
    ("key", "spoil"),
    [
        ("article:2", lambda c: (c.delete("article:2"), c.set("article:2", "x"))),
        ("voted:2", lambda c: (c.delete("voted:2"), c.set("voted:2", "x"))),
        ("voted_down:2", lambda c: c.rpush("voted_down:2", "user:3")),
        ("score:", lambda c: (c.delete("score:"), c.set("score:", "x"))),
        ("time:", lambda c: (c.delete("time:"), c.set("time:", "x"))),
        ("good:", lambda c: (c.delete("good:"), c.sadd("good:", "article:1"))),
        ("votes:", lambda c: (c.delete("votes:"), c.set("votes:", "x"))),
        ("groups:", lambda c: c.rpush("groups:", "g")),
        ("group:g", lambda c: c.set("group:g", "x")),
        ("links:abc", lambda c: c.set("links:abc", "x")),
        ("submitted:1", lambda c: (c.delete("submitted:1"), c.sadd("submitted:1", "article:1"))),
    ],
)
def test_a_key_of_the_wrong_type_is_reported_and_the_audit_goes_on(conn, now, key, spoil):
    for n in (1, 2, 3):
        post(n, now)
    conn.zincrby("score:", 5, "article:3")  # a problem elsewhere that must still be seen
    spoil(conn)
    found = kinds()
    assert key in found["wrong_type"]
    if key != "score:":
        assert "3" in found["score"]
    out, error = run("--repair")
    assert error is not None and "remain" in str(error)  # left for a person, and said so
    assert key in out
    assert "score" not in kinds()  # the problem elsewhere was mended
    assert key in kinds()["wrong_type"]  # untouched: the key still holds what it held


@pytest.mark.parametrize("value", ["nan", "inf", "1e20", "-1", "soon", None])
def test_a_bad_or_missing_time_is_taken_from_the_intact_time_index(conn, now, value):
    post(1, now - 100)
    post(2, now)
    if value is None:
        conn.hdel("article:1", "time")
    else:
        conn.hset("article:1", "time", value)
    assert "1" in kinds()["bad_time"]
    out, error = run("--repair")
    assert error is None, out
    assert float(conn.hget("article:1", "time")) == now - 100
    assert conn.zscore("time:", "article:1") == now - 100  # never moved to 1970
    assert conn.zscore("score:", "article:1") == now - 100 + 432
    assert audit.invariant_audit() == []


def test_a_bad_time_with_no_intact_index_is_reported_and_left(conn, now):
    post(1, now)
    conn.hset("article:1", "time", "inf")
    conn.zrem("time:", "article:1")
    before = conn.hgetall("article:1"), conn.zscore("score:", "article:1")
    out, error = run("--repair")
    assert error is not None and "bad_time" in out
    assert (conn.hgetall("article:1"), conn.zscore("score:", "article:1")) == before


def test_a_bad_count_of_an_open_article_is_recounted_from_its_voters(conn, now):
    post(1, now)
    conn.hset("article:1", "votes", "nan")
    conn.hset("article:1", "downvotes", "1.0")
    assert "1" in kinds()["bad_count"]
    out, error = run("--repair")
    assert error is None, out
    assert conn.hmget("article:1", "votes", "downvotes") == [b"1", b"0"]
    assert audit.invariant_audit() == []


def test_a_bad_count_of_a_closed_article_is_reported_and_left(conn, now):
    post(1, now - 8 * 86_400)
    conn.hset("article:1", "votes", "nan")
    out, error = run("--repair")
    assert error is not None and "bad_count" in out
    assert conn.hget("article:1", "votes") == b"nan"


def test_invalid_names_in_the_group_registry_are_reported(conn, now):
    services.group_create(name="g", actor=staff_actor())
    conn.hset("groups:", "Not A Group", "typed by hand")
    found = kinds()
    assert found["bad_group_name"] == {"groups:"}
    out, _ = run()
    assert "Not A Group" in out
