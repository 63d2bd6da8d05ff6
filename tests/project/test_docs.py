"""The documentation against the code it describes: the Redis key table against
articles/store/keys.py, the settings reference against articles/conf.py, the rate-limit
table against the registry of rules, and every relative link and repository path the pages
name against the checkout. A change to any of them fails here until the page follows."""

from __future__ import annotations

import ast
import inspect
import itertools
import re
import subprocess
import tomllib
from pathlib import Path

import pytest

from articles import conf
from articles.store import keys, ratelimits

BASE = Path(__file__).resolve().parents[2]
DOCS = BASE / "docs"
PAGES = [BASE / "README.md", *sorted(DOCS.glob("*.md"))]


def _prose(text: str) -> str:
    """The page without its fenced code blocks (a `# comment` there is no heading)."""
    return re.sub(r"^```.*?^```[^\n]*$", "", text, flags=re.M | re.S)


def _section(page: Path, heading: str) -> str:
    """The text under `## heading` up to the next heading of that level or higher."""
    text = _prose(page.read_text())
    start = text.index(f"\n## {heading}\n")
    end = re.search(r"\n#{1,2} ", text[start + 1 :])
    return text[start : start + 1 + end.start()] if end else text[start:]


def _rows(section: str) -> list[list[str]]:
    """The cells of each table row whose first cell starts with a code span."""
    rows = []
    for line in section.splitlines():
        if line.startswith("| `"):
            cells = re.split(r"(?<!\\)\|", line.strip().strip("|"))
            rows.append([cell.strip() for cell in cells])
    return rows


def _spans(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


# --- The Redis key table (docs/design.md) -------------------------------------------------

# Functions of keys.py that form no key: parsers, the group-name check, and user(), which
# forms the member naming a user in voter sets and `poster` fields.
NOT_KEYS = {
    "group_name",
    "user",
    "word_of",
    "comment_word_of",
    "article_id_of",
    "comment_id_of",
    "user_id_of",
    "article_id_or_none",
    "comment_id_or_none",
    "posting_id_or_none",
    "user_id_or_none",
    "flagged_member_of",
    # reading members back, and a group's keys (formed by group and group_order)
    "text",
    "article_ids",
    "member_key",
    "group_keys",
    "personal",  # a user's own lists (formed by hidden, saved, saved_comments, upvoted)
    "link_holder",  # the member a links:<b> value names
}
# A sample value of each argument the key functions take (every value, where a function
# accepts only a few).
SAMPLES: dict[str, list[object]] = {
    "article_id": [7],
    "comment_id": [7],
    "user_id": [7],
    "token": ["k"],
    "name": ["g"],
    "order_key": [keys.SCORE, keys.TIME],
    "period": ["day", "week", "month", "year"],
    "scope": ["vote"],
    "ident": ["ip"],
    "window": [1],
    "nonce": ["n" * 16],
    "word": ["redis"],
    "slot": [3],
    "term": [2],
    "member": ["article:7", "comment:7"],
    "norm": ["http://e.org/7"],
}


def _formed_keys() -> set[str]:
    """Every key (and the one channel) keys.py forms, with sample arguments; not the
    former keys an upgrade moves from (LEGACY_*), which the table does not list."""
    formed = {
        value
        for name, value in vars(keys).items()
        if name.isupper()
        and isinstance(value, str)
        and not name.endswith("_SCAN")
        and not name.startswith("LEGACY_")
    }
    for name, function in inspect.getmembers(keys, inspect.isfunction):
        if function.__module__ != keys.__name__ or name.startswith("_") or name in NOT_KEYS:
            continue
        params = list(inspect.signature(function).parameters)
        missing = [p for p in params if p not in SAMPLES]
        assert not missing, f"keys.{name}: add a sample of {missing} to SAMPLES"
        for values in itertools.product(*(SAMPLES[p] for p in params)):
            key = function(*values)
            formed.add(key[0] if isinstance(key, tuple) else key)  # link_slot: (key, field)
    return formed


def _documented_keys() -> list[str]:
    section = _section(DOCS / "design.md", "Redis keys")
    return [span for row in _rows(section) for span in _spans(row[0])]


def _pattern(documented: str) -> re.Pattern[str]:
    """`article:<id>` as a regex: each `<...>` is one segment without a colon."""
    parts = re.split(r"<[^>]+>", documented)
    return re.compile("[^:]+".join(map(re.escape, parts)))


def test_every_key_keys_py_forms_is_in_the_key_table():
    patterns = [_pattern(documented) for documented in _documented_keys()]
    missing = sorted(k for k in _formed_keys() if not any(p.fullmatch(k) for p in patterns))
    assert not missing, f"keys.py forms keys docs/design.md does not list: {missing}"


def test_every_key_in_the_key_table_is_one_keys_py_forms():
    formed = _formed_keys()
    documented = _documented_keys()
    assert len(documented) == len(set(documented)), "a key is listed twice"
    unknown = [d for d in documented if not any(_pattern(d).fullmatch(k) for k in formed)]
    assert len(documented) > 30 and not unknown, f"not formed by keys.py: {unknown}"


# --- The settings reference (docs/reusable-app.md) -----------------------------------------


def _settings_table() -> dict[str, list[str]]:
    table = {}
    for row in _rows(_section(DOCS / "reusable-app.md", "Settings")):
        (name,) = _spans(row[0])
        assert name.startswith("ARTICLES_") and name not in table, name
        table[name.removeprefix("ARTICLES_")] = row
    return table


def test_every_setting_in_conf_is_in_the_settings_table_with_its_default():
    table = _settings_table()
    assert sorted(table) == sorted(conf.DEFAULTS), (
        "the table and conf.DEFAULTS name different settings"
    )
    for name, default in conf.DEFAULTS.items():
        shown = _spans(table[name][1])
        assert shown, f"ARTICLES_{name}: the default cell starts with no code span"
        assert ast.literal_eval(shown[0]) == default, f"ARTICLES_{name}: {shown[0]} != {default!r}"


def test_the_redis_options_row_gives_every_fail_fast_default():
    row = " | ".join(_settings_table()["REDIS_OPTIONS"])
    for option, value in conf.REDIS_OPTION_DEFAULTS.items():
        assert re.search(rf"`{option}` {re.escape(str(value))}\b", row), (option, value)


# --- The rate-limit table (docs/api.md) ----------------------------------------------------


def test_the_rate_limit_table_is_the_registry_of_rules():
    table = {}
    for row in _rows(_section(DOCS / "api.md", "Rate limits")):
        (action,) = _spans(row[0])
        table[action] = row
    assert sorted(table) == sorted(ratelimits.DEFAULT_RULES)
    for action, rule in ratelimits.DEFAULT_RULES.items():
        (shown,) = _spans(table[action][1])
        assert ast.literal_eval(shown) == (rule.limit, rule.period), action
        assert table[action][2] == rule.by, action


# --- Links and paths -----------------------------------------------------------------------


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", ""))
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    found: set[str] = set()
    for heading in re.findall(r"^#{1,6} (.+)$", _prose(page.read_text()), flags=re.M):
        slug = _slug(heading)
        n = 0
        while (slug if n == 0 else f"{slug}-{n}") in found:
            n += 1
        found.add(slug if n == 0 else f"{slug}-{n}")
    return found


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(BASE)))
def test_every_relative_link_points_to_a_file_and_heading_that_exist(page: Path):
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", _prose(page.read_text())):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists() or (anchor and file.suffix == ".md" and anchor not in _anchors(file)):
            broken.append(target)
    assert not broken, broken


# Code spans that name a file or folder of this checkout.
_REPO_PATH = re.compile(r"(?:articles|bench|docker|docs|templates|tests|tools|votesite)/[\w./*-]*")


# Where a name like `articles/base.html` (a template) or `articles/js/vote.js` (a static
# file) is found, besides the checkout's root.
_APP_ROOTS = [BASE, *(BASE / "articles" / d for d in ("jinja2", "templates", "static"))]


# docs/performance.md is generated by the benchmarks and written with them; its paths are
# theirs to keep.
@pytest.mark.parametrize(
    "page", [p for p in PAGES if p.name != "performance.md"], ids=lambda p: p.name
)
def test_every_repository_path_a_page_names_exists(page: Path):
    named = {
        span.split("::")[0]
        for span in re.findall(r"`([^`\s]+)`", page.read_text())
        if _REPO_PATH.fullmatch(span.split("::")[0])
    }
    missing = sorted(
        p for p in named if not any(any(root.glob(p.rstrip("/"))) for root in _APP_ROOTS)
    )
    assert not missing, missing


@pytest.mark.parametrize(
    "page", [p for p in PAGES if p.name != "performance.md"], ids=lambda p: p.name
)
def test_every_file_a_page_names_by_itself_is_one_of_the_checkout(page: Path):
    """`audit.py`, `vote.lua`, `error.html`: named without their folder, found in one."""
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=BASE, capture_output=True, text=True, check=True
    ).stdout.split()
    names = {Path(f).name for f in tracked}
    named = set(re.findall(r"`([\w.-]+\.(?:py|lua|html|js|toml|yaml|conf))`", page.read_text()))
    missing = sorted(n for n in named if n not in names)
    assert not missing, missing


def test_the_readme_is_a_front_door_and_the_wheel_has_a_readme_of_its_own():
    assert len((BASE / "README.md").read_text().splitlines()) <= 150
    project = tomllib.loads((BASE / "pyproject.toml").read_text())["project"]
    readme = BASE / project["readme"]
    assert readme != BASE / "README.md" and readme.exists()
    assert "INSTALLED_APPS" in readme.read_text() and "articles.urls" in readme.read_text()
