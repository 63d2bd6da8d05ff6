"""Template filters and tags of the articles pages: safe links, times, votes, SVG charts."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta
from typing import Any
from urllib.parse import urlencode, urlsplit

from django import template
from django.contrib.humanize.templatetags.humanize import naturaltime
from django.utils.timesince import timesince
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from articles import conf
from articles.http import loginpage
from articles.store import clock, keys
from articles.types import Article, Vote
from articles.urlcache import url_for

register = template.Library()
_SPACE_OR_CONTROL = re.compile(r"[\s\x00-\x1f]")
# humanize's filter, registered here so the host need not install django.contrib.humanize.
register.filter("naturaltime", naturaltime)


@register.simple_tag
def site_name() -> str:
    """ARTICLES_SITE_NAME: the name in titles, the header and feeds."""
    return conf.site_name()


@register.simple_tag
def login_url(next: str = "") -> str:
    """The login page (the host's or the app's: articles.http.loginpage) with `next`."""
    return loginpage.url(next)


@register.filter
def safe_url(value: object) -> str:
    """The link if it is an absolute http(s) URL with a host, else "" (checked again here,
    whatever the store holds: the book's code or an old write may have put anything)."""
    if not isinstance(value, str) or not value:
        return ""
    try:
        parts = urlsplit(value.strip())
    except ValueError:
        return ""
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return ""
    if _SPACE_OR_CONTROL.search(value):
        return ""
    return value.strip()


@register.filter
def url_of(value: object, name: str) -> str:
    """`{% url name value %}` for listings, from a pattern reversed once per process
    (reversing was a quarter of a listing's rendering time)."""
    return url_for(name, value)


@register.filter
def named_url(name: str) -> str:
    """`{% url name %}`, reversed once per process."""
    return url_for(name)


@register.filter
def domain(value: object) -> str:
    """The host of a safe link without `www.`, for the "(example.org)" after a title."""
    link = safe_url(value)
    if not link:
        return ""
    host = urlsplit(link).hostname or ""
    return host.removeprefix("www.")


@register.filter
def group_slugs(names: object) -> list[str]:
    """The names that can be groups (slugs): another program may have written anything in
    an article's `groups` field, and a link to a non-slug name cannot even be formed."""
    if not isinstance(names, list | tuple):
        return []
    return [n for n in names if isinstance(n, str) and keys.GROUP_NAME.fullmatch(n)]


@register.filter
def is_open(article: Article) -> bool:
    """Is the article's voting window still open?"""
    return article.voting_open(clock.now())


@register.filter
def net(article: Article) -> int:
    return article.votes - article.downvotes


@register.filter
def vote_is(article: Article, label: str) -> bool:
    """Did the viewer vote `label` (up/down) on this article?"""
    return article.my_vote is not None and article.my_vote == Vote.from_label(label)


@register.filter
def ranks_like(article: Article) -> datetime:
    """The score read as a time: post time + net votes x (VOTE_SCORE seconds)."""
    return datetime.fromtimestamp(article.score, tz=UTC)


def ranking_words(article: Article) -> str:
    """The score in words: how much newer (or older) the net votes make the article look
    to the score ranking, e.g. "posted 36 minutes later" for +5 at 432 s a vote."""
    net = article.votes - article.downvotes
    if net == 0:
        return gettext("It has no net votes, so it ranks by its posting time alone.")
    posted = datetime.fromtimestamp(article.time, tz=UTC)
    lift = timesince(posted, posted + timedelta(seconds=abs(net) * conf.vote_score()))
    params = {"points": f"{net:+d}", "lift": lift}
    if net > 0:
        message = ngettext(
            "Its %(points)s point ranks it as if it had been posted %(lift)s later with no votes.",
            "Its %(points)s points rank it as if it had been posted %(lift)s later with no votes.",
            abs(net),
        )
    else:
        message = ngettext(
            "Its %(points)s point ranks it as if it had been posted %(lift)s earlier with no "
            "votes.",
            "Its %(points)s points rank it as if it had been posted %(lift)s earlier with no "
            "votes.",
            abs(net),
        )
    return message % params


@register.simple_tag
def vote_minutes() -> float:
    return round(conf.vote_score() / 60, 1)


@register.simple_tag(takes_context=True)
def page_url(context: dict[str, Any], number: int) -> str:
    """The current URL with `page` set to `number`, other query values kept."""
    request = context["request"]
    query = {k: v for k, v in request.GET.items() if k != "page"}
    query["page"] = str(number)
    return f"{request.path}?{urlencode(query)}"


@register.filter
def article_number(target: str) -> int | None:
    """The id in a moderation log target "article:<id>", else None."""
    try:
        return keys.article_id_of(target)
    except (ValueError, TypeError):
        return None


@register.filter
def comment_number(target: str) -> int | None:
    """The id in a moderation log target "comment:<id>", else None."""
    try:
        return keys.comment_id_of(target)
    except (ValueError, TypeError):
        return None


# What each kind of moderation log entry (services._log's actions) says to a reader; the
# API keeps the raw names.
MODLOG_WORDS = {
    "delete": _("deleted an article"),
    "edit": _("edited an article"),
    "groups": _("changed the groups of an article"),
    "comment_remove": _("removed a comment"),
    "group_create": _("created a group"),
    "group_update": _("changed the description of a group"),
    "group_delete": _("deleted a group"),
    "flag_resolve": _("upheld the flags on"),
    "flag_dismiss": _("dismissed the flags on"),
}

# A flag's reason (types.FlagReason's values) in words; the API keeps the values.
FLAG_REASON_WORDS = {
    "spam": _("spam"),
    "off-topic": _("off-topic"),
    "broken-link": _("broken link"),
    "duplicate": _("duplicate"),
    "abusive": _("abusive or rude"),
}


@register.filter
def modlog_words(action: str) -> str:
    """A moderation log action in words ("removed a comment"); an unknown one as it is."""
    return str(MODLOG_WORDS.get(action, action))


@register.filter
def flag_reason_words(reason: str) -> str:
    """A flag's reason in words ("broken link"); an unknown one as it is."""
    return str(FLAG_REASON_WORDS.get(reason, reason))


@register.filter
def isoday(value: date) -> str:
    return value.isoformat()


@register.inclusion_tag("articles/staff/_bar_chart.html")
def bar_chart(
    stats: list[tuple[date, int, int]], column: int, title: str, css: str
) -> dict[str, Any]:
    """An inline SVG bar chart of one column of stats_daily (1 posts, 2 votes)."""
    width, height, top, bottom, left = 520, 240, 16, 34, 40
    values = [row[1] if column == 1 else row[2] for row in stats]
    peak = max(values, default=0) or 1
    ceiling = _nice_ceiling(peak)
    inner_h = height - top - bottom
    slot = (width - left - 30) / max(1, len(stats))
    bars = []
    for i, (row, value) in enumerate(zip(stats, values, strict=True)):
        h = inner_h * value / ceiling
        bars.append(
            {
                "x": round(left + i * slot + slot * 0.15, 1),
                "y": round(top + inner_h - h, 1),
                "w": round(slot * 0.7, 1),
                "h": round(h, 1),
                "value": value,
                "day": row[0],
                "label": row[0].strftime("%d") if i % 5 == 0 or i == len(stats) - 1 else "",
                "cx": round(left + i * slot + slot / 2, 1),
            }
        )
    fractions = (0, 0.5, 1) if ceiling % 2 == 0 else (0, 1)
    ticks = [
        {"value": round(ceiling * f), "y": round(top + inner_h - inner_h * f, 1)} for f in fractions
    ]
    return {
        "bars": bars,
        "ticks": ticks,
        "title": title,
        "css": css,
        "width": width,
        "height": height,
        "left": left,
        "right": width - 30,
        "baseline": top + inner_h,
        "label_y": height - bottom + 16,
        "total": sum(values),
    }


def _nice_ceiling(peak: int) -> int:
    """A round axis top at or above `peak`: 1, 2, 5, 10, 20, 50, ..."""
    step = 1
    while True:
        for m in (1, 2, 5):
            if step * m >= peak:
                return step * m
        step *= 10
