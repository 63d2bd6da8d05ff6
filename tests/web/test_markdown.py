"""articles.markdown.render: the subset it keeps, and script that never comes out of it."""

from __future__ import annotations

import gc
import math
import threading
import time
from html.parser import HTMLParser

import pytest
from markupsafe import Markup

from articles import markdown
from articles.markdown import render

# Each one tries to get a script, an event handler or a dangerous address into the page.
XSS = [
    "[x](javascript:alert(1))",
    "[x](JaVaScRiPt:alert(1))",
    "[x](javascript&colon;alert(1))",
    "[x](&#106;avascript:alert(1))",
    "[x](&#x6A;&#x61;vascript:alert(1))",
    "[x](&#0000106&#0000097vascript:alert(1))",
    "[x](java\tscript:alert(1))",
    "[x]( javascript:alert(1))",
    "[x](<javascript:alert(1)>)",
    "[x](%6Aavascript:alert(1))",
    "[x](vbscript:msgbox(1))",
    "[x](VBScript:msgbox(1))",
    "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "[x](DATA:text/html,<script>alert(1)</script>)",
    "[x](file:///etc/passwd)",
    "<javascript:alert(1)>",
    "<JAVASCRIPT:alert(1)>",
    "[x][r]\n\n[r]: javascript:alert(1)",
    "[x][r]\n\n[r]: data:text/html,<script>alert(1)</script>",
    "<script>alert(1)</script>",
    "<SCRIPT SRC=//evil.example/x.js></SCRIPT>",
    "<img src=x onerror=alert(1)>",
    "<svg/onload=alert(1)>",
    "<iframe src=javascript:alert(1)></iframe>",
    "<a href='javascript:alert(1)'>x</a>",
    '<div style="background:url(javascript:alert(1))">x</div>',
    "<!-- <script>alert(1)</script> -->",
    "<details open ontoggle=alert(1)>",
    '[x](https://example.org "t\\" onmouseover=\\"alert(1)")',
    "[x](https://example.org 't' onmouseover='alert(1)')",
    '[x](https://example.org "><script>alert(1)</script>")',
    '[x](https://example.org/" onmouseover="alert(1))',
    "![x](javascript:alert(1))",
    '![x" onerror="alert(1)](https://example.org/a.png)',
    "[![x](https://example.org/a.png)](javascript:alert(1))",
    "[<img src=x onerror=alert(1)>](https://example.org)",
    "*<img src=x onerror=alert(1)>*",
    "`<script>alert(1)</script>`",
    "```html\n<script>alert(1)</script>\n```",
    "> <script>alert(1)</script>",
    "- <img src=x onerror=alert(1)>",
    "[a](https://example.org)<script>alert(1)</script>",
    "&lt;script&gt;alert(1)&lt;/script&gt;",
    "&#60;script&#62;alert(1)&#60;/script&#62;",
    "[x](https://example.org)](javascript:alert(1))",
    "[[x](javascript:alert(1))](https://example.org)",
    "**[x](javascript:alert(1))**",
    "https://example.org/<script>alert(1)</script>",
    'www.example.org/"onmouseover="alert(1)',
    "javascript:alert(1)",
    "mailto:x@example.org?body=<script>alert(1)</script>",
]


class _Elements(HTMLParser):
    """The elements and attributes a browser would see in the HTML."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[str, dict[str, str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, {name: value or "" for name, value in attrs}))


def _elements(html: str) -> list[tuple[str, dict[str, str]]]:
    parser = _Elements()
    parser.feed(html)
    parser.close()
    return parser.found


ALLOWED_ATTRIBUTES = {"a": {"href", "title", "rel"}, "ol": {"start"}}


@pytest.mark.parametrize("payload", XSS)
def test_xss_attempts_give_only_the_subset_and_safe_addresses(payload: str) -> None:
    html = str(render(payload))
    for name, attrs in _elements(html):
        assert name in markdown.TAGS, (payload, html)
        assert set(attrs) <= ALLOWED_ATTRIBUTES.get(name, set()), (payload, html)
        if name == "a":
            assert attrs["href"].startswith(("https://", "http://", "mailto:")), (payload, html)
            assert attrs["rel"] == "nofollow ugc noopener"
    assert "<script" not in html.lower()


def test_raw_html_is_shown_as_text() -> None:
    assert str(render("<b>bold</b> <script>alert(1)</script>")) == (
        "<p>&lt;b&gt;bold&lt;/b&gt; &lt;script&gt;alert(1)&lt;/script&gt;</p>"
    )


def test_a_javascript_link_stays_text_with_no_anchor() -> None:
    html = str(render("[click](javascript:alert(1))"))
    assert "<a" not in html
    assert "click" in html


def test_emphasis_strong_and_inline_code() -> None:
    assert str(render("*a* **b** `c<d`")) == (
        "<p><em>a</em> <strong>b</strong> <code>c&lt;d</code></p>"
    )


def test_paragraphs_and_line_breaks() -> None:
    assert str(render("one\ntwo\n\nthree")) == "<p>one<br>\ntwo</p>\n<p>three</p>"


def test_code_blocks_fenced_and_indented_keep_their_text_escaped() -> None:
    fenced = str(render("```python\nif a < b:\n    pass\n```"))
    assert fenced == "<pre><code>if a &lt; b:\n    pass\n</code></pre>"
    assert str(render("    x = 1")) == "<pre><code>x = 1\n</code></pre>"


def test_lists_and_quotes() -> None:
    html = str(render("- a\n- b\n\n3. c\n4. d\n\n> quoted"))
    assert "<ul>\n<li>a</li>\n<li>b</li>\n</ul>" in html
    assert '<ol start="3">\n<li>c</li>\n<li>d</li>\n</ol>' in html
    assert "<blockquote>\n<p>quoted</p>\n</blockquote>" in html


def test_links_get_rel_nofollow_ugc_noopener_and_keep_a_title() -> None:
    html = str(render('[the docs](https://example.org/a?b=1&c=2 "Read <this>")'))
    assert html == (
        '<p><a href="https://example.org/a?b=1&amp;c=2" title="Read &lt;this&gt;" '
        'rel="nofollow ugc noopener">the docs</a></p>'
    )


def test_bare_addresses_and_emails_become_links() -> None:
    html = str(render("see https://example.org/x, www.example.com and me@example.org"))
    assert '<a href="https://example.org/x" rel="nofollow ugc noopener">' in html
    assert '<a href="http://www.example.com" rel="nofollow ugc noopener">' in html
    assert '<a href="mailto:me@example.org" rel="nofollow ugc noopener">' in html


def test_relative_and_schemeless_links_stay_text() -> None:
    for text in ("[here](/a/1/)", "[here](a/1)", "[here](//evil.example/)", "[here](#top)"):
        assert "<a" not in str(render(text)), text


def test_images_are_not_made_the_address_is_a_link() -> None:
    html = str(render("![a cat](https://example.org/cat.png)"))
    assert "<img" not in html
    assert '<a href="https://example.org/cat.png" rel="nofollow ugc noopener">a cat</a>' in html


def test_headings_and_rules_stay_text() -> None:
    html = str(render("# Big\n\nSmall\n---\n\n***"))
    assert "<h" not in html and "<hr" not in html
    assert "# Big" in html


def test_render_returns_markup_and_an_empty_text_is_empty() -> None:
    assert isinstance(render("x"), Markup)
    assert str(render("")) == ""


def test_texts_of_any_length_are_kept_within_a_bound_on_their_html(monkeypatch) -> None:
    markdown.clear()
    made: list[str] = []
    real = markdown._render
    monkeypatch.setattr(markdown, "_render", lambda text: made.append(text) or real(text))
    long_text = "word " * 4000
    assert render(long_text) == render(long_text)
    assert made == [long_text]
    # Bounded by the HTML it holds: the oldest renderings go first.
    monkeypatch.setattr(markdown._kept, "max_bytes", 3 * (100 + markdown._ENTRY_OVERHEAD))
    markdown.clear()
    texts = [f"{i}" * 100 for i in range(5)]
    for text in texts:
        render(text)
    assert 0 < markdown._kept.bytes <= markdown._kept.max_bytes
    made.clear()
    render(texts[-1])
    render(texts[0])
    assert made == [texts[0]]


def test_threads_wanting_the_same_text_at_once_render_it_once(monkeypatch) -> None:
    markdown.clear()
    made: list[str] = []
    real = markdown._render

    def slow(text: str) -> str:
        made.append(text)
        time.sleep(0.2)
        return real(text)

    monkeypatch.setattr(markdown, "_render", slow)
    results: list[str] = []
    threads = [threading.Thread(target=lambda: results.append(render("*same*"))) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert results == ["<p><em>same</em></p>"] * 4
    assert made == ["*same*"]


def test_a_text_over_its_budget_is_escaped_plain_text_with_its_line_breaks(monkeypatch) -> None:
    markdown.clear()
    monkeypatch.setattr(markdown, "BUDGET_SECONDS", -1.0)
    monkeypatch.setattr(markdown, "CHECK_EVERY", 1)
    html = str(render("*one* <b>two</b>\nthree 'q'\n\n\n[x](https://example.org)"))
    assert html == (
        "<p>*one* &lt;b&gt;two&lt;/b&gt;<br>\nthree &#x27;q&#x27;</p>\n"
        "<p>[x](https://example.org)</p>"
    )


@pytest.mark.parametrize("payload", XSS)
def test_no_script_comes_out_of_the_plain_text_fallback_either(monkeypatch, payload: str) -> None:
    markdown.clear()
    monkeypatch.setattr(markdown, "BUDGET_SECONDS", -1.0)
    monkeypatch.setattr(markdown, "CHECK_EVERY", 1)
    html = str(render(payload))
    assert {name for name, _ in _elements(html)} <= {"p", "br"}


def test_a_collection_of_the_heap_during_a_parse_does_not_leave_the_text_plain() -> None:
    """The collector's pass through an older generation is the parsing thread's CPU: in a
    large process it can take the whole budget. Here it does (a callback of the collector
    burns 1.5 budgets in its first such pass during a parse), and the text is still made."""
    markdown.clear()
    burned: list[int] = []
    thresholds = gc.get_threshold()

    def slow_collection(phase: str, info: dict) -> None:
        parsing = markdown._clock.deadline != math.inf
        if phase == "start" and info["generation"] >= 1 and parsing and not burned:
            burned.append(info["generation"])
            gc.set_threshold(*thresholds)  # the second parse runs as any other
            until = time.thread_time() + 1.5 * markdown.BUDGET_SECONDS
            while time.thread_time() < until:
                pass

    gc.callbacks.append(slow_collection)
    gc.set_threshold(1, 1, 1)
    try:
        html = str(render("see *this* at https://example.org/y and www.example.net"))
    finally:
        gc.set_threshold(*thresholds)
        gc.callbacks.remove(slow_collection)
    assert burned
    assert "<em>this</em>" in html
    assert '<a href="https://example.org/y" rel="nofollow ugc noopener">' in html


def test_an_ordinary_long_text_is_rendered_within_its_budget() -> None:
    markdown.clear()
    paragraph = (
        "Some *emphasis*, some **strong**, `code()`, a [link](https://example.org/x) "
        "and https://example.com/y, in a sentence long enough to be prose.\n"
    )
    html = str(render("\n".join([paragraph] * 40 + ["- a list\n- of two\n"])))
    assert html.count("<em>emphasis</em>") == 40 and html.count("<a ") == 80
    assert "<li>of two</li>" in html


def test_quotes_in_text_are_escaped_as_the_pages_escape_them() -> None:
    assert str(render('say "hi" it\'s')) == "<p>say &quot;hi&quot; it&#x27;s</p>"


def test_a_title_with_brackets_and_quotes_survives_whole() -> None:
    html = str(render("[x](https://example.org \"a > b 'c' <d>\") after 'q'"))
    (anchor,) = [attrs for name, attrs in _elements(html) if name == "a"]
    assert anchor["title"] == "a > b 'c' <d>"
    assert html.endswith(" after &#x27;q&#x27;</p>")


def test_entities_show_as_typed() -> None:
    assert str(render("&lt;b&gt; &amp; &#60;")) == "<p>&amp;lt;b&amp;gt; &amp;amp; &amp;#60;</p>"
