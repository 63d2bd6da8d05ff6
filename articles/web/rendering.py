"""The app's own Jinja2 environment for its pages: Django's template engine spent ~70x a
bare view's time on a listing (25 articles through nested includes), Jinja2 a fraction.

It is the app's, not a TEMPLATES backend, so a host runs the pages with only the default
DjangoTemplates in its settings (Django's Jinja2 backend around the same environment was
measured no faster: bench/templates.py). Templates are looked up as articles.web.loading
says: the host's template DIRS first (an override, in Jinja2 syntax, may extend the app's
copy), then the app's own `articles/jinja2/`. Output is autoescaped the way Django
escapes. The context processors of the host's first DjangoTemplates backend run for every
page, as they would for its own templates; the page's own values win a name both give.

The environment is made once per process and kept in a content-addressed cache
(articles.caches "jinja2_environment", one entry): it is made of the settings, and any
settings change empties every cache. The pages' translated texts are one too
(articles.caches "page_texts", content-addressed by language and text, MAX_TEXTS of them),
and so are the texts of dates (articles.caches "date_texts", by the date or time with its
time zone, the format and the language, MAX_DATES of them).
"""

from __future__ import annotations

import functools
import html
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any
from urllib.parse import urlencode as _urlencode

import jinja2
from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.contrib.humanize.templatetags.humanize import naturaltime
from django.contrib.messages import get_messages
from django.http import HttpRequest, HttpResponse
from django.middleware.csrf import get_token
from django.template import defaultfilters
from django.template.backends.utils import csrf_input
from django.templatetags.static import static
from django.utils import formats, translation
from django.utils.module_loading import import_string
from django.utils.timesince import timeuntil
from django.utils.timezone import template_localtime  # type: ignore[attr-defined]
from markupsafe import Markup

from articles import conf, markdown, validation
from articles.caches import Cache, Kind
from articles.http import loginpage, responses
from articles.http.database import database_unavailable
from articles.store import clock, search, selectors
from articles.templatetags import articles_tags as tags
from articles.types import Article, Comment, Vote
from articles.urlcache import url_for
from articles.web import livepage, loading, parts, rows, sessionusers


def render(
    request: HttpRequest,
    template_name: str | list[str] | tuple[str, ...],
    context: dict[str, Any] | None = None,
    status: int | None = None,
) -> HttpResponse:
    """django.shortcuts.render through the app's environment. A comment thread on the page
    comes in as UTF-8, put into the encoded page (rows.comment_nodes)."""
    spliced: dict[str, bytes] = {}
    text = render_to_string(template_name, {**(context or {}), rows.SPLICE: spliced}, request)
    content = rows.splice(text, spliced) if spliced else text
    return HttpResponse(content, status=status)


def render_to_string(
    template_name: str | list[str] | tuple[str, ...],
    context: dict[str, Any] | None = None,
    request: HttpRequest | None = None,
    *,
    processors: bool = True,
) -> str:
    made = _made_once()
    env = made.env
    template = (
        env.get_template(template_name)
        if isinstance(template_name, str)
        else env.select_template(list(template_name))
    )
    values: dict[str, Any] = {}
    if request is not None:
        for processor in made.processors if processors else ():
            values.update(processor(request))
        # What the default context processors give a Django template (request, user,
        # messages) and what Django's Jinja2 backend adds (csrf_input, csrf_token).
        values.update(
            request=request,
            user=_resolved(getattr(request, "user", None)),
            messages=get_messages(request),
            # Once a page: a listing has a form (and so a csrf_input) on every row.
            csrf_input=_Once(functools.partial(csrf_input, request)),
            csrf_token=_Once(functools.partial(get_token, request)),
            inbox_unread=functools.cache(functools.partial(_inbox_unread, request)),
            **livepage.context_values(),
        )
    if context:
        values.update(context)
    with parts.rendering_page():
        return template.render(values)


def _inbox_unread(request: HttpRequest) -> int | None:
    """The logged-in user's unread replies, for the header of every page: read with the
    kept session's check when there was one (sessionusers), else one script call (a
    ZCOUNT), made only by a page that shows it. None for no one logged in, or when Redis
    cannot answer: the page (the 503 page among them) goes on without the count."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return None
    kept = sessionusers.kept_unread(request, user.pk)
    if kept is not None:
        return kept  # read with the kept session's check: no round trip of its own
    try:
        return selectors.inbox_unread(user_id=user.pk)
    except Exception as exc:
        if responses.dependency_error(exc) is None:
            raise
        return None


def _error_page(
    request: HttpRequest, template: str, context: dict[str, Any], status: int
) -> HttpResponse:
    try:
        page = render_to_string(template, context, request)
    except Exception:
        # A host's context processor that needs what is down (its database, say) must
        # not make a 503 a 500: the error page is the app's own, without their values.
        page = render_to_string(template, context, request, processors=False)
    return HttpResponse(page, status=status)


responses.register_page_renderer(_error_page)


class JinjaTemplateMixin:
    """For Django's class-based views (the auth views): render their template here."""

    request: HttpRequest

    def render_to_response(self, context: dict[str, Any], **kwargs: Any) -> HttpResponse:
        names = self.get_template_names()  # type: ignore[attr-defined]
        return render(self.request, names, context, kwargs.get("status"))


# The Jinja2 extensions of the app's environment, by import path: the one place to add one.
EXTENSIONS: list[str] = ["jinja2.ext.i18n"]


@dataclass(frozen=True)
class _Made:
    env: jinja2.Environment
    processors: tuple[Callable[[HttpRequest], dict[str, Any]], ...]


_environment: Cache[str, _Made] = Cache("jinja2_environment", Kind.CONTENT, entries=1)


def environment() -> jinja2.Environment:
    return _made_once().env


def _made_once() -> _Made:
    made = _environment.get("")
    if made is None:
        made = _Made(_made(), _host_processors())
        _environment.put("", made)
    return made


def _host_processors() -> tuple[Callable[[HttpRequest], dict[str, Any]], ...]:
    """The context processors of the host's first DjangoTemplates backend: the ones its
    own pages run (Django's built-in csrf one is left out: the pages give their own)."""
    for backend in getattr(settings, "TEMPLATES", []):
        if backend.get("BACKEND") == "django.template.backends.django.DjangoTemplates":
            paths = backend.get("OPTIONS", {}).get("context_processors", [])
            return tuple(import_string(path) for path in paths)
    return ()


def _made() -> jinja2.Environment:
    env = loading.Environment(
        loader=loading.loader(),
        extensions=EXTENSIONS,
        autoescape=True,
        auto_reload=bool(settings.DEBUG),
        finalize=_finalize,
        trim_blocks=False,
        keep_trailing_newline=True,
    )
    _install_translations(env)
    env.globals.update(
        static=static,
        url=_url,
        articles_site_name=conf.site_name,  # not "site_name": the auth views pass one
        vote_minutes=tags.vote_minutes,
        ranking_words=tags.ranking_words,
        page_url=page_url,
        user_url=user_url,
    )
    env.filters.update(
        date=date_filter,
        utc=utc,
        isotime=isotime,
        whole=whole,
        naturaltime=naturaltime,
        timeuntil=timeuntil,
        floatformat=defaultfilters.floatformat,
        pluralize=defaultfilters.pluralize,
        linebreaks=_linebreaks,
        urlencode=defaultfilters.urlencode,
        safe_url=tags.safe_url,
        domain=tags.domain,
        site_url=site_url,
        group_slugs=tags.group_slugs,
        ranks_like=tags.ranks_like,
        article_number=tags.article_number,
        comment_number=tags.comment_number,
        modlog_words=tags.modlog_words,
        isoday=tags.isoday,
        marked=marked,
        excerpt=excerpt,
        markdown=markdown.render,
    )
    env.tests.update(open=_is_open)
    env.globals.update(net=_net, voted=_voted, article_row=rows.article_row)
    env.globals.update(article_rows=rows.article_rows)
    env.globals.update(ago=_ago, comment_row=rows.comment_row, comment_nodes=rows.comment_nodes)
    env.globals.update(
        user_page_url=user_page_url, page_part=parts.page_part, form_fields=parts.form_fields
    )
    env.globals.update(live_element=livepage.live_element, live_new=livepage.live_new)
    # not "login_url": the auth views pass one (settings.LOGIN_URL)
    env.globals.update(
        articles_login_url=loginpage.url,
        vote_login_url=loginpage.vote_link,
        comment_vote_login_url=loginpage.comment_vote_page,
    )
    return env


def _install_translations(env: jinja2.Environment) -> None:
    """Django's translation functions as the pages' `_`, `gettext`, `ngettext`, `pgettext`
    and `npgettext`, looked up in the active language at render time, newstyle: the values
    are named in the call (`_("%(n)s new", n=x)`, `{% trans n=x %}`) and escaped as
    _finalize escapes (as Django's blocktranslate does), not as markupsafe would (`'` as
    &#39;), so an English page reads byte for byte as the text did before it was marked.
    `language()` is the active language (the pages' <html lang>), `number` a quantity in
    its notation."""
    env.globals.update(
        _=_gettext,
        gettext=_gettext,
        ngettext=_ngettext,
        pgettext=_pgettext,
        npgettext=_npgettext,
        language=translation.get_language,
    )
    env.newstyle_gettext = True  # type: ignore[attr-defined]  # jinja2.ext.i18n reads it
    env.filters.update(number=number)


def _formatted(text: str, variables: dict[str, Any]) -> Markup:
    """A translated text (the template's own, so markup) with its values escaped in; one
    with neither values nor a `%` is as it is (most of a page's texts, done at once)."""
    if not variables and "%" not in text:
        return Markup(text)  # noqa: S704
    return Markup(text) % {k: _finalize(v) for k, v in variables.items()}  # noqa: S704


# Content-addressed: a text's translation in one language is fixed once the catalogs are
# loaded (a change of LOCALE_PATHS is a settings change, which empties every cache). A page
# asks for 50-90 texts; Django's gettext walks the catalog and its fallbacks for each.
MAX_TEXTS = 4096
MAX_DATES = 1024
_texts: Cache[tuple[str | None, str], str] = Cache("page_texts", Kind.CONTENT, entries=MAX_TEXTS)
_dates: Cache[tuple[Any, ...], str] = Cache("date_texts", Kind.CONTENT, entries=MAX_DATES)


def _gettext(message: str, /, **variables: Any) -> Markup:
    key = (parts.made_under()[0], message)
    text = _texts.get(key)
    if text is None:
        text = translation.gettext(message)
        _texts.put(key, text)
    return _formatted(text, variables)


def _ngettext(singular: str, plural: str, num: int, /, **variables: Any) -> Markup:
    variables.setdefault("num", num)
    return _formatted(translation.ngettext(singular, plural, num), variables)


def _pgettext(context: str, message: str, /, **variables: Any) -> Markup:
    return _formatted(translation.pgettext(context, message), variables)


def _npgettext(context: str, singular: str, plural: str, num: int, /, **variables: Any) -> Markup:
    variables.setdefault("num", num)
    return _formatted(translation.npgettext(context, singular, plural, num), variables)


def _url(name: str, *values: object) -> str:
    """The pages' `url()`: url_for under the rendering's URLconf and script prefix."""
    _, prefix, urlconf = parts.made_under()
    return url_for(name, *values, under=(urlconf, prefix))


def number(value: Any) -> Any:
    """A quantity in the active language's notation (Django's number_format: its decimal
    separator, and its grouping where the host sets USE_THOUSAND_SEPARATOR). A whole number
    without grouping reads the same in every language, and is passed on as it is."""
    if type(value) is int and not settings.USE_THOUSAND_SEPARATOR:
        return value
    return formats.number_format(value)


def _resolved(user: Any) -> Any:
    """The user behind AuthenticationMiddleware's lazy object: a page asks it is_staff and
    is_authenticated on every row, and each lookup through the proxy costs."""
    if user is None or not hasattr(user, "_wrapped"):
        return user
    try:
        user.is_authenticated  # noqa: B018 (loads it)
    except Exception as exc:
        if not database_unavailable(exc):
            raise
        # The 503 page of a database outage: it needs no user, and must not ask for one.
        return AnonymousUser()
    return user._wrapped


def _finalize(value: Any) -> Any:
    """Escape as Django does (`'` as &#x27;, through html.escape), so the pages read byte
    for byte as before; what is already safe (Markup, SafeString, forms) passes through."""
    if hasattr(value, "__html__") or type(value) is int:
        return value
    return Markup(html.escape(str(value)))  # noqa: S704 (escaped right here)


class _Once:
    """A value computed on first use, then kept for the rest of the page."""

    __slots__ = ("_make", "_value")

    def __init__(self, make: Any) -> None:
        self._make, self._value = make, None

    def __html__(self) -> str:
        if self._value is None:
            self._value = self._make()
        return str(self._value)

    __str__ = __html__


def marked(title: str, words: Any = ()) -> Markup:
    """`title` escaped, with the words a search looked for (in any spelling) in <mark>."""
    if not words:
        return Markup(html.escape(title))  # noqa: S704 (escaped right here)
    return Markup(  # noqa: S704 (every piece escaped right here)
        "".join(
            f"<mark>{html.escape(piece)}</mark>" if hit else html.escape(piece)
            for piece, hit in search.highlight(title, tuple(words))
        )
    )


def excerpt(text: str, words: Any = ()) -> Markup:
    """A comment's text shortened around the first word a search looked for, escaped,
    with the words looked for in <mark> (the comment search's results)."""
    return marked(search.excerpt(text, tuple(words or ())), words)


def utc(timestamp: float, fmt: str = "%Y-%m-%d %H:%M") -> str:
    """A Unix time as UTC text (the pages label these times UTC)."""
    return time.strftime(fmt, time.gmtime(timestamp))


def isotime(timestamp: float) -> str:
    """What Django's `date:'c'` gave for a UTC datetime: ISO 8601 with +00:00."""
    return datetime.fromtimestamp(timestamp, tz=UTC).isoformat()


def whole(value: float) -> str:
    """`floatformat:0` for the score (rounded half up), without Decimal and localization."""
    return str(math.floor(value + 0.5))


def _linebreaks(value: Any) -> str:
    return defaultfilters.linebreaks_filter(value, autoescape=True)


def date_filter(value: Any, fmt: str = "") -> str:
    """Django's `date` filter, with the local-time conversion Django's engine does first;
    a date's or time's text kept per language ("date_texts": Django's formatting was
    ~0.1 ms a day link of the front page)."""
    if isinstance(value, datetime):
        value = template_localtime(value)
    if not isinstance(value, date):
        return defaultfilters.date(value, fmt)
    key = (value.isoformat(), getattr(value, "tzinfo", None), fmt, parts.made_under()[0])
    text = _dates.get(key)
    if text is None:
        text = defaultfilters.date(value, fmt)
        _dates.put(key, text)
    return text


def page_url(request: HttpRequest, number: int) -> str:
    """The current URL with `page` set to `number`, other query values kept."""
    query = {k: v for k, v in request.GET.items() if k != "page"}
    query["page"] = str(number)
    return f"{request.path}?{_urlencode(query)}"


def site_url(link: object) -> str:
    """The address of the page of a link's site (/d/<domain>/), or "" for none."""
    name = validation.link_domain(link) if isinstance(link, str) else ""
    return url_for("articles:domain-detail", name) if name else ""


def user_url(person: Any) -> str:
    """The address of `person`'s page (user_page_url)."""
    return user_page_url(person.pk, person.get_username())


def user_page_url(user_id: int, name: str) -> str:
    """The address of a user's page: /u/<name>/, with no redirect on the way, or /u/<pk>/
    for a name of digits alone (made before the name rule), which /u/<name>/ would take
    for an account number. A listing passes the name its item stores: no query a row."""
    if not name or name.isdigit():
        return url_for("articles:user-by-id", user_id)
    return url_for("articles:user-detail", name)


def _is_open(article: Article) -> bool:
    return article.voting_open(clock.now())


def _net(article: Article) -> int:
    return article.votes - article.downvotes


def _ago(posted: float) -> str:
    return rows.ago_of(posted, time.time())


def _voted(article: Article | Comment) -> str:
    """ "up", "down" or "" : the viewer's own vote on the article."""
    vote = article.my_vote
    return "up" if vote is Vote.UP else "down" if vote is Vote.DOWN else ""
