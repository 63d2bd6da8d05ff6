"""Helpers of the hostile-input tests: payloads, an HTML/feed checker, and store snapshots."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import urlsplit

from articles.store.connection import get_connection
from articles.types import NewPost
from tests.actors import staff_actor

# Text that would run script if a page, feed or API page showed it unescaped. Each holds a
# character that escaping changes, so finding one verbatim in served HTML is a failure.
PAYLOADS = [
    '<script>alert("x1")</script>',
    '"><img src=x onerror=alert("x2")>',
    "'><svg onload=alert('x3')>",
    "</textarea><script>alert('x4')</script>",
    "</title><script>alert('x5')</script>",
    "&lt;script&gt;alert('x6')&lt;/script&gt;",
    "<a href=\"javascript:alert('x7')\">x7</a>",
    '<iframe srcdoc="&lt;script&gt;alert(8)&lt;/script&gt;"></iframe>',
    "]]></summary><script>alert('x9')</script><summary><![CDATA[",
    "<!--<script>alert('x10')</script>-->",
    "&#60;script&#62;alert('x11')&#60;/script&#62;",
    "<style>*{background:url(\"javascript:alert('x12')\")}</style>",
    '" onmouseover="alert(\'x13\')" x="',
    "<body onload=alert('x14')>",
]

# Links the forms refuse, written straight into Redis as another program (the book's code)
# could: none may become an href.
LINKS = [
    "javascript:alert(1)",
    "JaVaScRiPt:alert(1)",
    " javascript:alert(1)",
    "\tjavascript:alert(1)",
    "java\nscript:alert(1)",
    "&#106;avascript:alert(1)",
    "&#x6A;avascript:alert(1)",
    "javascript&colon;alert(1)",
    "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
    "DATA:text/html,<script>alert(1)</script>",
    "vbscript:msgbox(1)",
    " VBScript:msgbox(1)",
    "//evil.example/x",
    "/\\evil.example/x",
    'http://"><script>alert(1)</script>',
    "https://example.org/\"onmouseover='alert(1)'",
    "\x00javascript:alert(1)",
    "javascript://example.org/%0Aalert(1)",
]

URL_ATTRIBUTES = {"href", "src", "action", "formaction", "xlink:href", "poster", "cite", "data"}
FORBIDDEN_TAGS = {"iframe", "object", "embed", "frame", "frameset", "base", "applet"}


def url_is_safe(value: str) -> bool:
    """An http(s) URL with a host, a site-relative path, a query or a fragment: nothing a
    browser would run. Browsers drop tabs and newlines anywhere and trim C0 and spaces."""
    v = re.sub(r"[\t\n\r]", "", value).strip("".join(map(chr, range(33))))
    if v == "":
        return True  # <form action=""> posts to the page itself
    scheme = re.match(r"([a-zA-Z][a-zA-Z0-9+.-]*):", v)
    if scheme:
        return scheme.group(1).lower() in ("http", "https") and bool(urlsplit(v).netloc)
    return v.startswith(("/", "?", "#")) and not v.startswith(("//", "/\\"))


class PageChecker(HTMLParser):
    """Collects what would let script run: inline scripts, on* handlers, unsafe URLs."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []
        self.urls = 0
        self._script_open = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        for name, value in attrs:
            if name.startswith("on"):
                self.problems.append(f"<{tag} {name}=...> event handler")
            if name in URL_ATTRIBUTES and value is not None:
                self.urls += 1
                if not url_is_safe(value):
                    self.problems.append(f"<{tag} {name}={value!r}>")
            if name == "style" and value and "javascript" in value.lower():
                self.problems.append(f"<{tag} style={value!r}>")
            if name == "srcdoc":
                self.problems.append(f"<{tag} srcdoc>")
        if tag in FORBIDDEN_TAGS:
            self.problems.append(f"<{tag}>")
        if tag == "meta" and (found.get("http-equiv") or "").lower() == "refresh":
            self.problems.append("<meta refresh>")
        if tag == "script":
            data_block = (found.get("type") or "").lower() == "application/json"
            src = found.get("src") or ""
            if src and not src.startswith("/static/"):
                self.problems.append(f"<script src={src!r}> not our own")
            self._script_open = not data_block
        if tag == "style":
            self._script_open = False

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._script_open = False

    def handle_data(self, data: str) -> None:
        if self._script_open and data.strip():
            self.problems.append(f"inline script {data[:60]!r}")


def html_problems(body: str, payloads: list[str] = PAYLOADS) -> list[str]:
    """Everything wrong with a served HTML document: verbatim payloads, inline script,
    event handlers, forbidden elements and URLs that are neither http(s) nor relative."""
    checker = PageChecker()
    checker.feed(body)
    checker.close()
    problems = [f"unescaped {p!r}" for p in payloads if p in body]
    return problems + checker.problems


def snapshot() -> dict[bytes, object]:
    """Every key of the store with its type, value and whether it expires: compare two."""
    conn = get_connection()
    found: dict[bytes, object] = {}
    for key in conn.scan_iter(count=1000):
        kind = conn.type(key)
        if kind == b"string":
            value: object = conn.get(key)
        elif kind == b"hash":
            value = conn.hgetall(key)
        elif kind == b"set":
            value = conn.smembers(key)
        elif kind == b"zset":
            value = conn.zrange(key, 0, -1, withscores=True)
        elif kind == b"list":
            value = conn.lrange(key, 0, -1)
        else:
            value = kind
        found[key] = (kind, value, conn.ttl(key) != -1)
    return found


def without_volatile(state: dict[bytes, object]) -> dict[bytes, object]:
    """A snapshot without rate-limit counters, which count refused requests by design."""
    return {k: v for k, v in state.items() if not k.startswith(b"ratelimit:")}


# --- every write of the pages and the API, against a small world built afresh each time ---

ROLES = ("anonymous", "user", "poster", "other", "staff")

# action -> (path, form data); {a} is the poster's article, in group red.
PAGE_WRITES: dict[str, tuple[str, dict[str, object]]] = {
    "vote": ("/a/{a}/vote/", {"direction": "down"}),
    "submit": ("/submit/", {"title": "New", "link": "https://example.org/new", "groups": "red"}),
    "edit": ("/staff/a/{a}/", {"title": "Edited", "link": "https://example.org/e", "reason": "r"}),
    "group move": ("/staff/a/{a}/groups/", {"add": "green", "remove": "red", "reason": "r"}),
    "delete": ("/staff/a/{a}/delete/", {"reason": "r"}),
    "group create": ("/staff/groups/", {"name": "blue", "description": "d"}),
    "group update": ("/staff/groups/red/", {"description": "changed"}),
    "group delete": ("/staff/groups/red/delete/", {"reason": "r"}),
}

# action -> (method, path, JSON body)
API_WRITES: dict[str, tuple[str, str, dict[str, object] | None]] = {
    "submit": ("post", "/api/articles/", {"title": "New", "link": "https://example.org/new"}),
    "vote": ("put", "/api/articles/{a}/vote/", {"value": "down"}),
    "edit": ("put", "/api/articles/{a}/", {"title": "Edited", "link": "https://example.org/e"}),
    "group move": ("post", "/api/articles/{a}/groups/", {"add": ["green"], "remove": ["red"]}),
    "delete": ("delete", "/api/articles/{a}/?reason=r", None),
    "group create": ("post", "/api/groups/", {"name": "blue", "description": "d"}),
    "group update": ("patch", "/api/groups/red/", {"description": "changed"}),
    "group delete": ("delete", "/api/groups/red/?reason=r", None),
}


def build_world(users: dict[str, object]) -> int:
    """An empty store, then groups red and green, the poster's article in red (with the
    other user's up-vote) and one article of the other user. Returns the poster's article."""
    from articles.store import services
    from articles.types import Vote

    get_connection().flushall()
    services.group_create(name="red", description="reds", actor=staff_actor())
    services.group_create(name="green", description="greens", actor=staff_actor())
    poster, other = users["poster"], users["other"]
    article = services.article_post(
        NewPost(
            user_id=poster.pk,
            poster_name="poster",
            title="A",
            link="https://example.org/a",
            groups=["red"],
        )
    )
    services.article_post(NewPost(user_id=other.pk, poster_name="other", title="B", text="b"))  # type: ignore[attr-defined]
    services.article_vote(article_id=article.id, user_id=other.pk, direction=Vote.UP)  # type: ignore[attr-defined]
    return article.id


def db_state() -> tuple[object, ...]:
    """The accounts and API tokens in Django's database."""
    from django.contrib.auth import get_user_model
    from django.contrib.sessions.models import Session

    from articles.models import ApiToken

    users = list(get_user_model().objects.order_by("pk").values_list("pk", "password", "is_staff"))
    tokens = sorted(ApiToken.objects.values_list("digest", flat=True))
    return users, tokens, Session.objects.count()
