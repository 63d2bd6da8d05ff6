"""CPU exhaustion through Markdown: a crafted text costs a bounded render, once per process.

Before the budget, 10,000 characters of `[<` cost markdown-it-py ~110 ms, 3,333 lines of
`x.com` ~250 ms, and every feed fetch rendered its 50 entries again (texts over 2,000
characters were never kept): 50 such comments made one feed fetch take ~10 s.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from django.contrib.syndication.views import Feed

from articles import conf, markdown
from articles.store import services
from articles.types import NewPost
from articles.validation import TEXT_MAX
from articles.web import feeds

# Shapes that made markdown-it-py slow (link-label scans, delimiter runs, linkify), or
# that look as if they might (deep nesting, reference definitions, entities).
SHAPES: dict[str, Callable[[int], str]] = {
    "[<": lambda n: "[<" * (n // 2),
    "*[`<": lambda n: "*[`<" * (n // 4),
    "[": lambda n: "[" * n,
    "*[": lambda n: "*[" * (n // 2),
    "![": lambda n: "![" * (n // 2),
    "[ newline": lambda n: "[\n" * (n // 2),
    "[x](": lambda n: "[x](" * (n // 4),
    "backticks": lambda n: "`a" * (n // 2),
    "*a**": lambda n: "*a**" * (n // 4),
    "**_": lambda n: "**_" * (n // 3),
    "_ run": lambda n: "_" * n,
    "* *": lambda n: "a* *" * (n // 4),
    "> nesting": lambda n: ">" * n,
    "list nesting": lambda n: "".join("  " * i + "- x\n" for i in range(n // 200)),
    "reference definitions": lambda n: "[a]: https://x.org\n" * (n // 19),
    "autolink-ish <": lambda n: "<a" * (n // 2),
    "entity-like": lambda n: "&#" * (n // 2),
    "bare domains per line": lambda n: "x.com\n" * (n // 6),
    "bare domains": lambda n: "a.co " * (n // 5),
    "line breaks": lambda n: "a\n" * (n // 2),
}


def _cpu_ms(text: str) -> float:
    """The least CPU time of five renders of `text` (kept renderings bypassed): the least,
    as a thread's CPU time still grows when the other vCPU (a hyperthread of the same core)
    is busy, which a full parallel run makes it."""
    times = []
    for _ in range(5):
        start = time.thread_time()
        markdown._render(text)
        times.append(time.thread_time() - start)
    return min(times) * 1000


@pytest.mark.parametrize("shape", SHAPES)
def test_a_pathological_comment_of_the_longest_kind_renders_in_bounded_time(shape: str) -> None:
    text = SHAPES[shape](conf.comment_max_length())
    assert _cpu_ms(text) < 75  # the budget is 30 ms; main took 110-180 ms for `[<`, `*[`


@pytest.mark.parametrize("shape", SHAPES)
def test_a_pathological_text_post_of_the_longest_kind_renders_in_bounded_time(shape: str) -> None:
    text = SHAPES[shape](TEXT_MAX)
    assert _cpu_ms(text) < 150  # main took 220-440 ms


@pytest.fixture
def renders(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts the renderer is asked to render from now on (a kept one is not)."""
    markdown.clear()
    made: list[str] = []
    real = markdown._render

    def counted(text: str) -> str:
        made.append(text)
        return real(text)

    monkeypatch.setattr(markdown, "_render", counted)
    return made


def _thread_with_long_texts(make_user):  # type: ignore[no-untyped-def]
    ann, bob = make_user("ann"), make_user("bob")
    article = services.article_post(
        NewPost(user_id=ann.pk, poster_name="ann", title="Slow?", link="", text="[<" * 10_000)
    )
    for i, user in enumerate([ann, bob] * 3):
        services.comment_post(
            article_id=article.id,
            user_id=user.pk,
            author_name=user.username,
            text=f"{i} " + "*[`<" * 2_400,
        )
    return article


@pytest.mark.parametrize(
    "url",
    [
        "/feeds/a/{id}/comments/",
        "/feeds/new/",
        "/feeds/top/",
        "/api/articles/{id}/comments/",
    ],
)
def test_a_feed_or_api_thread_read_again_renders_nothing(client, make_user, renders, url):  # type: ignore[no-untyped-def]
    article = _thread_with_long_texts(make_user)
    url = url.format(id=article.id)
    assert client.get(url).status_code == 200
    assert renders  # the first read renders
    renders.clear()
    assert client.get(url).status_code == 200
    assert renders == []


@pytest.mark.usefixtures("clock")
def test_feeds_are_rate_limited(client, make_user, settings):  # type: ignore[no-untyped-def]
    settings.ARTICLES_RATE_LIMITS = {"feed": (3, 60)}
    article = _thread_with_long_texts(make_user)
    for url in ["/feeds/new/", "/feeds/top/", f"/feeds/a/{article.id}/comments/"]:
        assert client.get(url).status_code == 200
    refused = client.get("/feeds/good/")
    assert refused.status_code == 429
    assert refused["Retry-After"] == "60"
    assert "Too many feed requests" in refused.content.decode()
    assert client.get("/").status_code == 200  # the pages are not counted as feeds


def test_a_feed_read_again_unchanged_is_not_built_again_and_a_change_shows_at_once(
    client, make_user, monkeypatch
):  # type: ignore[no-untyped-def]
    feeds.clear()
    built: list[object] = []
    real = Feed.get_feed
    monkeypatch.setattr(Feed, "get_feed", lambda self, *a: built.append(self) or real(self, *a))
    article = _thread_with_long_texts(make_user)
    url = f"/feeds/a/{article.id}/comments/"
    first = client.get(url)
    assert client.get(url).content == first.content
    assert client.get(url)["Last-Modified"] == first["Last-Modified"]
    assert len(built) == 1
    services.comment_post(article_id=article.id, user_id=1, author_name="ann", text="*news*")
    assert "&lt;em&gt;news&lt;/em&gt;" in client.get(url).content.decode()
    assert len(built) == 2
    assert client.get("/feeds/new/").status_code == 200  # another feed, its own XML
    assert len(built) == 3
