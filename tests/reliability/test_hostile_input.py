"""Hostile input at the store: group names, orders, periods, pages, ids and links from
users never form a key outside their namespace, and dangerous links are refused."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from articles import validation
from articles.errors import ArticleNotFound, GroupNotFound, InvalidInput
from articles.operations import audit
from articles.store import keys, selectors, services
from articles.store.connection import get_connection
from articles.types import NewPost, Order, Period, Vote
from tests import factories
from tests.actors import staff_actor

# Every key the store may hold (keys.py): anything else in Redis is a leak.
KEY = re.compile(
    r"article:|article:\d+|voted:\d+|voted_down:\d+|submitted:\d+|score:|time:|good:|votes:|groups:"
    r"|links:|modlog:|stats:posts|stats:votes|group:[a-z0-9-]{1,64}|(score|time):[a-z0-9-]{1,64}"
    r"|top:(day|week|month|year)|votes:(day|week|month|year)|votes:periods"
    r"|idempotency:\d+:[A-Za-z0-9_.:-]{1,128}|credential_epoch:\d+|live:"
    r"|article_karma:\d+|groups:ranked"
)

HOSTILE_NAMES = [
    "",
    " ",
    ":",
    "*",
    "?",
    "[a-z]*",
    "a:b",
    "score:",
    "group:x",
    "../etc",
    "..",
    "a/b",
    "a b",
    "A",
    "ünïcode",
    "\U0001d52f\U0001d522\U0001d521"  # fraktur "red",
    "a" * 65,
    "a" * 100_000,
    "a\x00b",
    "a\nb",
    "1E309",
    "-" + "9" * 400,
    None,
    123,
    10**30,
    ["red"],
    {"red": 1},
]
HOSTILE_PAGES = [0, -1, 10**30, 100_001, "0", "-1", "x", "", " ", "1e3", "1.5", "\uff11", "10" * 20]
HOSTILE_PAGES += [None, 1.5, True, "9" * 13, "../2", "*"]
HOSTILE_IDS = [0, -1, 10**30, "1", "../1", "*", True, 1.5, None]


def _keys() -> set[str]:
    return {k.decode() for k in get_connection().scan_iter(count=1000)}


def _assert_namespaced() -> None:
    leaks = sorted(k for k in _keys() if not KEY.fullmatch(k))
    assert leaks == []


@pytest.fixture
def article() -> int:
    group = factories.group("red")
    return factories.article(1, title="t", link="", text="x", groups=[group], poster_name="a").id


@pytest.mark.parametrize("name", HOSTILE_NAMES, ids=lambda v: repr(v)[:20])
def test_a_hostile_group_name_is_refused_everywhere_and_writes_no_key(article: int, name):
    before = _keys()
    calls = [
        lambda: selectors.group_article_list(name=name),
        lambda: selectors.group_article_list(name=name, order=Order.TIME, page=2),
        lambda: selectors.group_get(name=name),
        lambda: services.group_create(name=name, description="d", actor=staff_actor()),
        lambda: services.group_update(name=name, description="d", actor=staff_actor()),
        lambda: services.group_delete(name=name, actor=staff_actor()),
        lambda: services.article_post(
            NewPost(user_id=2, poster_name="b", title="t", text="y", groups=[name])
        ),
        lambda: services.article_groups_update(article_id=article, add=[name], actor=staff_actor()),
        lambda: services.article_groups_update(
            article_id=article, remove=[name], actor=staff_actor()
        ),
    ]
    for call in calls:
        with pytest.raises(InvalidInput):
            call()
    assert _keys() == before
    _assert_namespaced()
    assert audit.invariant_audit() == []


@given(name=st.text(max_size=80))
@settings(max_examples=150, deadline=None)
def test_any_text_as_a_group_name_is_either_a_slug_or_refused(name: str):
    try:
        page = selectors.group_article_list(name=name)
    except InvalidInput as exc:
        assert exc.field == "group"
        assert not re.fullmatch(r"[a-z0-9-]{1,64}", name.strip())
    except GroupNotFound as exc:  # a well-formed name nobody created
        assert re.fullmatch(r"[a-z0-9-]{1,64}", name.strip()), exc
    else:
        assert page.items == []
    _assert_namespaced()


@pytest.mark.parametrize("page", HOSTILE_PAGES, ids=lambda v: repr(v)[:20])
def test_a_hostile_page_number_is_refused_by_every_listing(article: int, page):
    for call in (
        lambda: selectors.article_list(page=page),
        lambda: selectors.group_article_list(name="red", page=page),
        lambda: selectors.top_article_list(period=Period.WEEK, page=page),
        lambda: selectors.user_article_list(poster_id=1, page=page),
        lambda: selectors.modlog_page(page=page),
        lambda: selectors.good_article_page(page=page),
    ):
        with pytest.raises(InvalidInput) as caught:
            call()
        assert caught.value.field == "page"
    _assert_namespaced()


def test_a_page_past_the_end_is_empty_not_an_error(article: int):
    assert selectors.article_list(page=100_000).items == []


@pytest.mark.parametrize("value", ["", "score", "SCORE", "votes", ":", "*", "../", "top:day"])
def test_orders_and_periods_only_come_from_their_enums(value: str):
    with pytest.raises(ValueError):
        Order(value) if value != "score" else Period(value)
    with pytest.raises(ValueError):
        Period(value)
    with pytest.raises(ValueError):
        keys.top(value)
    with pytest.raises(ValueError):
        keys.group_order(value, "red")


@pytest.mark.parametrize("article_id", HOSTILE_IDS, ids=repr)
def test_a_hostile_article_id_is_not_found_and_writes_no_key(article: int, article_id):
    before = _keys()
    with pytest.raises(ArticleNotFound):
        selectors.article_get(article_id=article_id)
    with pytest.raises(ArticleNotFound):
        services.article_vote(article_id=article_id, user_id=2, direction=Vote.UP)
    with pytest.raises((ArticleNotFound, InvalidInput)):
        services.article_groups_update(article_id=article_id, add=["red"], actor=staff_actor())
    with pytest.raises(ArticleNotFound):
        services.article_delete(article_id=article_id, reason="spam", actor=staff_actor("m", pk=1))
    assert _keys() == before
    _assert_namespaced()
    assert audit.invariant_audit() == []


@pytest.mark.parametrize("token", ["", "a b", "*", "../x", "ü", "a" * 129, "a\x00"], ids=repr)
def test_a_hostile_idempotency_key_is_refused(token: str):
    with pytest.raises(InvalidInput):
        services.article_post(
            NewPost(user_id=1, poster_name="a", title="t", text="x"), idempotency_key=token
        )
    assert _keys() <= {keys.ARTICLE_IDS}  # at most the id counter moved


DANGEROUS_LINKS = [
    "javascript:alert(1)",
    "JaVaScRiPt:alert(1)",
    "JAVASCRIPT:alert(1)",
    " javascript:alert(1)",
    "\tjavascript:alert(1)",
    "\u00a0javascript:alert(1)",
    "java\tscript:alert(1)",
    "java\nscript:alert(1)",
    "javascript://example.org/%0Aalert(1)",
    "&#106;avascript:alert(1)",
    "&#x6A;avascript:alert(1)",
    "javascript&colon;alert(1)",
    "%6Aavascript:alert(1)",
    "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
    "DATA:text/html,<script>alert(1)</script>",
    " data:text/html,x",
    "vbscript:msgbox(1)",
    "VbScRiPt:msgbox(1)",
    "file:///etc/passwd",
    "ftp://example.org/x",
    "//evil.example/x",
    "/relative/path",
    "http:/evil.example",
    "http://",
    "https://",
    "http://exa mple.org",
    "http://example.org/\x00",
    "http://<script>/",
    'http://"onmouseover=alert(1)//',
    "http://例え.jp",
    "https://example.org:99999/",
    "x" * 3000,
]


@pytest.mark.parametrize("link", DANGEROUS_LINKS, ids=lambda v: repr(v)[:30])
def test_links_other_than_http_and_https_are_refused(link: str):
    with pytest.raises(InvalidInput) as caught:
        validation.clean_link(link)
    assert caught.value.field == "link"
    with pytest.raises(InvalidInput):
        services.article_post(NewPost(user_id=1, poster_name="a", title="t", link=link, text="x"))
    assert get_connection().exists(keys.TIME) == 0


@pytest.mark.parametrize(
    "link",
    [
        "https://example.org/",
        "http://example.org/a?b=c#d",
        "HTTPS://EXAMPLE.ORG/x",
        "http://10.0.0.1:8080/",
    ],
)
def test_plain_http_and_https_links_are_accepted(link: str):
    assert validation.clean_link(link) == link


@pytest.mark.parametrize(
    ("field", "values"),
    [
        ("title", {"title": "t" * 301}),
        ("title", {"title": "   "}),
        ("title", {"title": "a\nb"}),
        ("title", {"title": "a\x00b"}),
        ("text", {"text": "x" * 20_001}),
        ("link", {"link": "https://example.org/" + "a" * 2_000}),
        ("title", {"title": ["a list"]}),
        ("title", {"title": 10**30}),
    ],
    ids=lambda v: repr(v)[:30],
)
def test_oversized_or_malformed_fields_are_refused_by_name_and_write_nothing(field, values):
    data = {"title": "ok", "link": "", "text": "body", **values}
    with pytest.raises(InvalidInput) as caught:
        services.article_post(NewPost(user_id=1, poster_name="a", **data))
    assert caught.value.field == field
    assert _keys() == set()  # checked before the id counter moves
