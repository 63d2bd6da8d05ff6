"""Every Lua script answers with one shared status enum, mapped to errors in one place."""

from __future__ import annotations

import re
from importlib.resources import files

import pytest

from articles import errors
from articles.store import scripts
from articles.types import Status, article_score

LUA = files("articles.store") / "lua"


def test_every_script_answers_with_a_named_status_never_a_bare_number():
    for path in LUA.iterdir():
        source = path.read_text()
        assert not re.search(r"return \{\s*-?\d", source), path.name


def test_the_lua_status_table_is_types_status():
    """Ensure the table S the scripts read is generated from types.Status."""
    for status in Status:
        assert f"{status.name} = {status.value}" in scripts._STATUS
    assert scripts.VOTE.script.startswith(scripts._LIB)


def test_every_statuses_script_uses_is_one_of_the_enum():
    names = {status.name for status in Status}
    for path in LUA.iterdir():
        used = set(re.findall(r"\bS\.([A-Z_]+)", path.read_text()))
        assert used <= names, (path.name, used - names)


@pytest.mark.parametrize(
    ("status", "error"),
    [
        (Status.NOT_FOUND, errors.ArticleNotFound),
        (Status.VOTING_CLOSED, errors.VotingClosed),
        (Status.RETRY, errors.Conflict),
        (Status.NO_GROUP, errors.GroupNotFound),
        (Status.GROUP_EXISTS, errors.GroupExists),
        (Status.ID_TAKEN, errors.Conflict),
        (Status.DUPLICATE_LINK, errors.DuplicateLink),
    ],
)
def test_each_error_status_raises_its_error(status, error):
    with pytest.raises(error):
        scripts.raise_for_status([int(status), b"article:3"])


def test_ok_repeated_and_allowed_statuses_are_returned():
    assert scripts.raise_for_status([1]) is Status.OK
    assert scripts.raise_for_status([2, b"5"]) is Status.REPEATED
    assert scripts.raise_for_status([-3], allow=(Status.RETRY,)) is Status.RETRY


def test_the_score_rule_has_one_home():
    assert article_score(1000.0, 3, 1, vote_score=432) == 1000 + 864


def test_the_lua_utc_day_agrees_with_python(conn):
    """Ensure the day a vote or post is counted under is the UTC date Python gives."""
    from datetime import UTC, datetime

    moments = [0, 86_399, 86_400, 951_782_400, 1_709_164_799, 1_709_164_800, 4_102_444_800]
    moments += [1_800_000_000 + n * 7_777_777 for n in range(60)]
    source = scripts._LIB + b"return utc_day(tonumber(ARGV[1]))"
    for moment in moments:
        expected = datetime.fromtimestamp(moment, tz=UTC).date().isoformat()
        assert conn.eval(source, 0, moment).decode() == expected, moment
