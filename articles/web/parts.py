"""The parts of every page that are the same for every request in one language: the
<head>'s scripts with the words they are given, the brand, the navigation, the footer.
Rendered on every page they were about half of the base template's time (40 translated
texts, a dozen URLs and static files a page); each is now rendered once and kept.

A part is a macro of `articles/_page_parts.html` (a host may override that template like
any other), rendered with the values a page passes it and nothing else: no request, no
user, no CSRF field, so no viewer's data can be kept in one. Content-addressed
(articles.caches "page_parts"): keyed by the part, its values (the navigation: the page's
URL name), the active language, the script prefix and the URLconf its links are made under,
so never stale (a settings change empties every cache). With the environment's auto_reload
on (DEBUG) a part is rendered every time, so an edited template shows at once.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

import jinja2
from django.urls import get_script_prefix, get_urlconf
from django.utils import translation
from markupsafe import Markup, escape

from articles.caches import Cache, Kind

TEMPLATE = "articles/_page_parts.html"
# A few parts, the navigation once per URL name of a page (~70), in each language served.
MAX_PARTS = 512

_parts: Cache[tuple[Any, ...], Markup] = Cache("page_parts", Kind.CONTENT, entries=MAX_PARTS)


# The language, script prefix and URLconf of the page being rendered (rendering_page()).
_page: ContextVar[tuple[str | None, str, Any] | None] = ContextVar("articles_page", default=None)


def made_under() -> tuple[str | None, str, Any]:
    """The active language, the script prefix and the URLconf: looked up once a page while
    one renders (each is a thread-local look-up of ~2-5 us through asgiref's Local, and a
    page asked for ~40: each text, each URL), else each time."""
    made = _page.get()
    if made is None:
        made = (translation.get_language(), get_script_prefix(), get_urlconf())
    return made


@contextlib.contextmanager
def rendering_page() -> Iterator[None]:
    """made_under() looked up now and given for the rest of the block (a page's render:
    nothing in it changes the language or the prefix, and a render within it does its own)."""
    token = _page.set((translation.get_language(), get_script_prefix(), get_urlconf()))
    try:
        yield
    finally:
        _page.reset(token)


@jinja2.pass_context
def page_part(context: jinja2.runtime.Context, part: str, /, **values: str) -> Markup:
    """The macro `part` of TEMPLATE called with `values`, from the cache when kept."""
    env = context.environment
    key = (part, tuple(sorted(values.items())), *made_under())
    text = None if env.auto_reload else _parts.get(key)
    if text is None:
        macro = getattr(env.get_template(TEMPLATE).module, part)
        text = Markup(macro(**values))  # noqa: S704 (an autoescaped template's output)
        _parts.put(key, text)
    return text


# What stands in a kept form for its idempotency key (random per form shown).
_KEY_SLOT = "vsformkey" + secrets.token_hex(8)


@jinja2.pass_context
def form_fields(context: jinja2.runtime.Context, form: Any) -> Markup:
    """`articles/_form.html` for `form`. An unbound form's fields are the same for every
    request but for its idempotency key (a fresh one each time it is shown), so they are
    rendered once per form class, initial values, text limit, language, script prefix
    and URLconf and kept, the key put in on each use: Django's widget templates took
    ~0.7 ms of every article page. A bound form (errors, the text sent) is rendered."""
    env = context.environment
    initial = dict(form.initial)
    key_value = initial.pop("idempotency_key", None)
    # Only a form with no other initial value (the article page's) is kept: a reply's
    # parent would make an entry per comment, and push the page parts out.
    if form.is_bound or env.auto_reload or initial or not isinstance(key_value, str):
        return Markup(env.get_template("articles/_form.html").render(form=form))  # noqa: S704
    limits = tuple(
        sorted((n, tuple(sorted(f.widget.attrs.items()))) for n, f in form.fields.items())
    )
    key = ("form", type(form), tuple(sorted(initial.items())), limits, form.auto_id, *made_under())
    text = _parts.get(key)
    if text is None:
        stand_in = type(form)(
            initial={**initial, "idempotency_key": _KEY_SLOT}, auto_id=form.auto_id
        )
        text = Markup(env.get_template("articles/_form.html").render(form=stand_in))  # noqa: S704
        _parts.put(key, text)
    return Markup(text.replace(_KEY_SLOT, escape(key_value)))  # noqa: S704
