"""The search tests written before stemming pin the index word for word: they run with
words kept as typed (ARTICLES_SEARCH_LANGUAGE = "", a setting a host may choose), and a
module that sets STEMMED = True runs with the default English stemmer."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _search_language(request, settings):
    if not getattr(request.module, "STEMMED", False):
        settings.ARTICLES_SEARCH_LANGUAGE = ""


def builds(conn) -> int:
    """How many results search.lua has built so far (commandstats): a build reads its
    candidates once, with SMEMBERS (a word's or the group's set) or a ZRANGE of the
    period's articles; a walk of an article search asks the words' sets with SMISMEMBER
    and reads rankings with ZREVRANGE."""
    stats = conn.info("commandstats")
    return sum(
        stats.get(f"cmdstat_{name}", {"calls": 0})["calls"] for name in ("smembers", "zrange")
    )
