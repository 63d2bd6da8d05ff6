"""check_votes --repair runs the sites' backfill every time: on a whole index it writes
nothing and runs no script (before, a domain_fix.lua call of 200 articles a batch, 5-6 ms
each at 1M articles: bench/scale.py)."""

from __future__ import annotations

from articles.operations import audit
from tests import factories


def _scripts(conn) -> int:
    return int(conn.info("commandstats").get("cmdstat_evalsha", {}).get("calls", 0))


def test_the_backfill_of_a_whole_index_runs_no_script(conn, now):
    for n in range(5):
        factories.article(1, link=f"https://example.org/{n}", now=now + n)
    before = _scripts(conn)
    assert audit.domain_backfill(batch=2) == 0
    assert _scripts(conn) == before


def test_the_backfill_still_adds_only_what_is_missing(conn, now):
    ids = [factories.article(1, link=f"https://example.org/{n}", now=now + n).id for n in range(4)]
    conn.zrem("domain:example.org", f"article:{ids[1]}", f"article:{ids[3]}")
    assert audit.domain_backfill(batch=2) == 2
    assert conn.zcard("domain:example.org") == 4
    assert audit.invariant_audit() == []
