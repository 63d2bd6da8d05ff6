"""Search words are stems (ARTICLES_SEARCH_LANGUAGE, English by default): "tools" finds
"tool", an article's forms of one word are one set entry, and an index built before
stemming keeps finding what it found while reindex_search rebuilds it."""

from __future__ import annotations

import io

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command

from articles.errors import StoreCorrupt
from articles.operations import audit
from articles.store import keys, search, selectors
from tests import factories

STEMMED = True  # conftest: the default English stemmer


def post(now: float, title: str, text: str = "body") -> int:
    return factories.article(1, title, "", text=text, now=now, poster_name="u").id


def ids(q: str) -> list[int]:
    return sorted(a.id for a in selectors.article_search(q=q).items)


def test_a_word_finds_its_other_forms(now):
    one = post(now, "A tool for Redis")
    two = post(now + 1, "Two tools compared")
    three = post(now + 2, "Tooling around", text="Running redis")
    assert ids("tool") == ids("tools") == ids("TOOLING") == [one, two, three]
    assert ids("run") == ids("runs") == [three]
    assert ids("tools -running") == [one, two]


def test_forms_of_one_word_are_one_index_entry(conn, now):
    post(now, "Tools, tool and tooling", text="databases database")
    assert set(conn.keys("postings:*")) == {b"postings:databas", b"postings:tool"}


def test_highlight_marks_every_form_of_the_words_looked_for(now):
    post(now, "Two tools compared")
    page = selectors.article_search(q="tool")
    assert page.words == ("tool",)
    assert search.highlight("Two tools compared", page.words) == [
        ("Two ", False),
        ("tools", True),
        (" compared", False),
    ]


def test_the_language_is_a_setting(settings):
    settings.ARTICLES_SEARCH_LANGUAGE = "german"
    assert search.tokens("Häuser Hauses") == ["haus", "haus"]
    settings.ARTICLES_SEARCH_LANGUAGE = ""
    assert search.tokens("Tools") == ["tools"]
    settings.ARTICLES_SEARCH_LANGUAGE = "klingon"
    with pytest.raises(ImproperlyConfigured):
        search.tokens("tools")


def test_an_index_built_before_stemming_works_while_it_is_rebuilt(conn, now, settings):
    settings.ARTICLES_SEARCH_LANGUAGE = ""  # the index as the code before stemming wrote it
    old = post(now, "Two tools compared")
    settings.ARTICLES_SEARCH_LANGUAGE = "english"
    new = post(now + 1, "A tool for Redis")
    assert conn.sismember("postings:tools", old) and conn.sismember("postings:compared", old)
    # The typed word's set is read beside its stem's until the index is rebuilt: the old
    # article is still found as before the change, the new one by every form.
    assert ids("tool") == [new]
    assert ids("tools") == [old, new]  # not the cached result of "tool", which it shares
    assert ids("tools -two") == [new]
    assert not conn.keys("search:*:u*")  # the unions are scratch, deleted by the script
    # Its words are those of the rules now: missing from their sets, stale in the former ones.
    problems = [p for p in audit.invariant_audit() if p.kind in audit.SEARCH_KINDS]
    assert {(p.kind, p.article_id) for p in problems} == {
        ("search_unindexed", old),
        ("search_stale", old),
    }
    assert {p.entry for p in problems if p.kind == "search_stale"} >= {
        "postings:tools",
        "postings:compared",
    }

    out = io.StringIO()
    call_command("reindex_search", "--no-progress", stdout=out)
    assert "2 article(s) read, 1 reindexed" in out.getvalue()
    assert conn.get(keys.SEARCH_STEMMER) == b"english"
    assert not conn.exists("postings:tools", "postings:compared")  # emptied sets are gone
    assert ids("tool") == ids("tools") == [old, new]
    assert [p for p in audit.invariant_audit() if p.kind in audit.SEARCH_KINDS] == []


def test_changing_the_language_bridges_again_until_the_next_rebuild(conn, now, settings):
    post(now, "Two tools compared")
    call_command("reindex_search", "--no-progress", stdout=io.StringIO())
    settings.ARTICLES_SEARCH_LANGUAGE = "porter"
    assert conn.get(keys.SEARCH_STEMMER) == b"english"
    assert ids("tools") == [1]
    call_command("reindex_search", "--no-progress", stdout=io.StringIO())
    assert conn.get(keys.SEARCH_STEMMER) == b"porter"
    assert ids("tools") == [1]


def test_a_stemmer_marker_of_the_wrong_type_is_reported_and_no_search_reads_past_it(conn, now):
    post(now, "Two tools compared")
    conn.rpush(keys.SEARCH_STEMMER, "english")
    problems = [p for p in audit.invariant_audit() if p.entry == keys.SEARCH_STEMMER]
    assert [(p.kind, p.detail) for p in problems] == [
        ("wrong_type", "search:stemmer is a list, not a string")
    ]
    with pytest.raises(StoreCorrupt):
        selectors.article_search(q="tools")
