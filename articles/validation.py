"""Input rules shared by the store, forms and serializers; each raises InvalidInput(field).

Cache (articles.caches): "link_domains", content-addressed, 4,096 links' sites (1 MB of
links), so an API answer does not split and IDNA-encode the same link again."""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING
from urllib.parse import SplitResult, urlsplit, urlunsplit

from django.utils.translation import gettext, gettext_noop

from articles import conf
from articles.caches import Cache, Kind
from articles.errors import InvalidInput
from articles.i18n import filled_lazy

if TYPE_CHECKING:
    from articles.types import NewPost

# A group's name, the one rule: forms, serializers, the OpenAPI schema, the URL converter,
# the key schema (keys.group) and the readers of stored data all use this pattern.
GROUP_NAME_MAX = 64
GROUP_NAME_PATTERN = rf"[a-z0-9-]{{1,{GROUP_NAME_MAX}}}"
GROUP_NAME = re.compile(GROUP_NAME_PATTERN)
GROUP_NAME_HELP = filled_lazy(
    gettext_noop("1-%(max)d characters of lower-case a-z, 0-9 and '-'."), {"max": GROUP_NAME_MAX}
)

TITLE_MAX = 300
LINK_MAX = 2_000
TEXT_MAX = 20_000
DESCRIPTION_MAX = 500
REASON_MAX = 500

_HOST = re.compile(
    r"(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
)
_CONTROL = re.compile(r"[\x00-\x1f\x7f\s]")


def clean_title(value: object) -> str:
    title = _plain(value, "title").strip()
    if not title:
        raise InvalidInput("title", gettext("A title is required."))
    if len(title) > TITLE_MAX:
        raise InvalidInput(
            "title", gettext("A title has at most %(max)d characters.") % {"max": TITLE_MAX}
        )
    return title


def clean_text(value: object) -> str:
    text = _plain(value, "text", allow_newlines=True).strip()
    if len(text) > TEXT_MAX:
        raise InvalidInput(
            "text", gettext("A text has at most %(max)d characters.") % {"max": TEXT_MAX}
        )
    return text


def clean_comment_text(value: object) -> str:
    """A comment's Markdown source: not empty, at most ARTICLES_COMMENT_MAX_LENGTH
    characters after trimming (field `text`)."""
    text = _plain(value, "text", allow_newlines=True).strip()
    if not text:
        raise InvalidInput("text", gettext("A comment needs some text."))
    limit = conf.comment_max_length()
    if len(text) > limit:
        raise InvalidInput(
            "text", gettext("A comment has at most %(max)d characters.") % {"max": limit}
        )
    return text


def comment_fingerprint(article_id: int, parent_id: int | None, text: str) -> str:
    """What makes two comment submissions the same request, for their Idempotency-Key."""
    canonical = json.dumps([article_id, parent_id or 0, text], ensure_ascii=True)
    return hashlib.sha256(canonical.encode()).hexdigest()[:32]


def clean_link(value: object) -> str:
    """An absolute http(s) URL with a real host, or "" for none; every other scheme refused."""
    link = _plain(value, "link").strip()
    if not link:
        return ""
    if len(link) > LINK_MAX:
        raise InvalidInput(
            "link", gettext("A link has at most %(max)d characters.") % {"max": LINK_MAX}
        )
    if _CONTROL.search(link):
        raise InvalidInput("link", gettext("A link may not contain spaces or control characters."))
    parts = _split(link)
    if parts.scheme not in ("http", "https"):
        raise InvalidInput("link", gettext("A link must start with http:// or https://."))
    host = (parts.hostname or "").rstrip(".")
    if not host or not (_HOST.fullmatch(host) or _is_ip(host)):
        raise InvalidInput("link", gettext("A link needs a valid host name."))
    try:
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        raise InvalidInput("link", gettext("A link has a bad port number.")) from None
    return link


def post_fingerprint(title: str, link: str, text: str, groups: list[str]) -> str:
    """What makes two submissions the same request, for their Idempotency-Key: the cleaned
    title, link, text and groups (so a retry that differs only in spacing or group order
    is still the same request)."""
    canonical = json.dumps([title, link, text, sorted(groups)], ensure_ascii=True)
    return hashlib.sha256(canonical.encode()).hexdigest()[:32]


def clean_post(title: object, link: object, text: object) -> tuple[str, str, str]:
    title, link, text = clean_title(title), clean_link(link), clean_text(text)
    if not link and not text:
        raise InvalidInput("link", gettext("Give a link, a text, or both."))
    return title, link, text


def is_group_name(value: object) -> bool:
    return isinstance(value, str) and GROUP_NAME.fullmatch(value) is not None


def clean_group_name(value: object, field: str = "group") -> str:
    name = value.strip() if isinstance(value, str) else value
    if not isinstance(name, str) or not is_group_name(name):
        raise InvalidInput(field, gettext("A group name is %(rule)s") % {"rule": GROUP_NAME_HELP})
    return name


def clean_new_post(post: NewPost) -> NewPost:
    """A post's title, link, text and groups as the store keeps them (groups sorted)."""
    title, link, text = clean_post(post.title, post.link, post.text)
    groups = tuple(clean_group_names(list(post.groups)))
    return replace(post, title=title, link=link, text=text, groups=groups)


def idempotency_key(key_of: Callable[[int, str], str], user_id: int, token: str) -> str:
    """The store key of a client's Idempotency-Key (keys.idempotency or
    keys.comment_idempotency); InvalidInput naming `idempotency_key` for a bad one."""
    try:
        return key_of(user_id, token)
    except ValueError as exc:
        raise InvalidInput("idempotency_key", str(exc)) from None


def clean_group_names(values: object, field: str = "groups") -> list[str]:
    if values is None:
        return []
    if isinstance(values, str):
        values = [v for v in re.split(r"[\s,]+", values) if v]
    if not isinstance(values, list | tuple | set | frozenset):
        raise InvalidInput(field, gettext("Groups must be a list of group names."))
    if len(values) > 20:
        raise InvalidInput(field, gettext("An article can be in at most 20 groups at once."))
    return sorted({clean_group_name(v, field) for v in values})


def clean_description(value: object) -> str:
    text = _plain(value, "description").strip()
    if len(text) > DESCRIPTION_MAX:
        raise InvalidInput(
            "description", gettext("At most %(max)d characters.") % {"max": DESCRIPTION_MAX}
        )
    return text


def clean_reason(value: object) -> str:
    text = _plain(value, "reason").strip()
    if len(text) > REASON_MAX:
        raise InvalidInput("reason", gettext("At most %(max)d characters.") % {"max": REASON_MAX})
    return text


def clean_page(value: object, max_page: int) -> int:
    """A page number from 1 to max_page; anything else (0, -1, 'x', 10**30) is refused."""
    if isinstance(value, bool):
        raise InvalidInput("page", gettext("A page is a whole number from 1."))
    if isinstance(value, str):
        value = value.strip()
        if not value.isascii() or not value.isdigit() or len(value) > 12:
            raise InvalidInput(
                "page", gettext("A page is a whole number from 1 to %(max)d.") % {"max": max_page}
            )
        value = int(value)
    if not isinstance(value, int) or not 1 <= value <= max_page:
        raise InvalidInput(
            "page", gettext("A page is a whole number from 1 to %(max)d.") % {"max": max_page}
        )
    return value


def normalize_link(link: str) -> str:
    """A canonical form for the duplicate check: lower-case scheme and host, no default
    port, no `www.`, no fragment, no trailing slash, http and https alike."""
    parts = _split(link)
    host = (parts.hostname or "").rstrip(".")
    host = host.removeprefix("www.")
    port = parts.port
    if port and port not in (80, 443):
        host = f"{host}:{port}"
    path = parts.path.rstrip("/")
    return urlunsplit(("http", host, path, parts.query, ""))


def indexed_link(link: str) -> str:
    """A stored link as the duplicate check indexes it (normalize_link); "" for none, or
    for one no post could have indexed (written by other code)."""
    try:
        return normalize_link(link) if link else ""
    except (InvalidInput, ValueError):
        return ""


# A site's name as domain pages and the domain:<d> index name it (link_domain): a host in
# lower case, IDNA's ASCII form, without "www." or a final dot; or an IP address.
DOMAIN_MAX = 253
DOMAIN_PATTERN = rf"[a-z0-9.:-]{{1,{DOMAIN_MAX}}}"  # the characters; clean_domain checks the rest
DOMAIN = re.compile(DOMAIN_PATTERN)


_link_domains: Cache[str, str] = Cache(
    "link_domains", Kind.CONTENT, entries=4096, max_bytes=1 << 20
)


def link_domain(link: str) -> str:
    """The site a link is on, the "(example.org)" after its title made canonical: "" for
    no link, one that is not http(s), or a host no domain page can name (the last two
    written by other code: the pages show no such link)."""
    if not link:
        return ""
    domain = _link_domains.get(link)
    if domain is None:
        domain = _link_domain(link)
        _link_domains.put(link, domain, size=len(link))
    return domain


def _link_domain(link: str) -> str:
    try:
        parts = urlsplit(link)
        host = parts.hostname if parts.scheme.lower() in ("http", "https") else None
    except ValueError:
        return ""
    try:
        return clean_domain(host) if host else ""
    except InvalidInput:
        return ""


def clean_domain(value: object) -> str:
    """A domain as link_domain forms it, from what a reader typed (any case, Unicode or
    IDNA form, with or without "www."). Raises InvalidInput("domain")."""
    if not isinstance(value, str) or len(value) > DOMAIN_MAX * 4:
        raise _not_a_domain()
    host = value.strip().rstrip(".").lower()
    if _is_ip(host):
        import ipaddress

        return str(ipaddress.ip_address(host))
    try:
        # The standard library's IDNA (2003) codec: the name's ASCII form, nameprep'd.
        host = host.encode("idna").decode("ascii").lower()
    except UnicodeError:
        raise _not_a_domain() from None
    host = host.removeprefix("www.")
    if len(host) > DOMAIN_MAX or not _HOST.fullmatch(host):
        raise _not_a_domain()
    return host


def _not_a_domain() -> InvalidInput:
    """Made only when refusing: the API names every listed article's domain."""
    return InvalidInput("domain", gettext("Not a domain name."))


def domain_label(domain: str) -> str:
    """A canonical domain as people read it: its IDNA labels ("xn--...") in Unicode."""
    labels = []
    for label in domain.split("."):
        try:
            labels.append(
                label.encode("ascii").decode("idna") if label.startswith("xn--") else label
            )
        except UnicodeError:
            labels.append(label)
    return ".".join(labels)


def _split(link: str) -> SplitResult:
    try:
        return urlsplit(link)
    except ValueError:
        raise InvalidInput("link", gettext("This is not a valid URL.")) from None


_IPV4_CHARACTERS = frozenset("0123456789.")


def _is_ip(host: str) -> bool:
    import ipaddress

    # An IPv6 address has a ':', an IPv4 one only ASCII digits and dots: a host name is
    # answered without the parse and the exception it raises.
    if ":" not in host and not _IPV4_CHARACTERS.issuperset(host):
        return False
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _plain(value: object, field: str, *, allow_newlines: bool = False) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InvalidInput(field, gettext("Must be text."))
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate ("\ud800"): no text a browser can send
        raise InvalidInput(field, gettext("Must be valid Unicode text.")) from None
    value = unicodedata.normalize("NFC", value)
    if "\x00" in value:
        raise InvalidInput(field, gettext("May not contain NUL characters."))
    if not allow_newlines and ("\n" in value or "\r" in value):
        raise InvalidInput(field, gettext("Must be a single line."))
    return value
