"""The small rankings stay listpacks to 512 entries (the embedded server's and
docker/redis.conf's zset-max-listpack-entries, under its ziplist name): ~13 B an entry
against ~98 in a skiplist (docs/design.md, "Memory and capacity")."""

from __future__ import annotations

from articles.store import keys, services
from articles.types import NewPost


def _post(number: int) -> NewPost:
    return NewPost(
        user_id=1, poster_name="p", title=f"T{number}", link=f"https://site.example/{number}"
    )


def test_a_sites_and_a_users_ranking_stay_listpacks_to_512_entries(conn) -> None:
    services.article_post_many(posts=[_post(n) for n in range(512)])
    site, own = keys.domain("site.example"), keys.submitted(1)
    assert conn.zcard(site) == conn.zcard(own) == 512
    assert conn.object("encoding", site) == conn.object("encoding", own) == b"listpack"
    services.article_post(_post(512))
    assert conn.object("encoding", site) == conn.object("encoding", own) == b"skiplist"
