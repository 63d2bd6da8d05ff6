"""The strings of django.contrib.humanize's `naturaltime` ("3 minutes ago"), marked again
here so that the app's own catalogue translates them: the pages and rows.ago_of use that
filter without the host installing django.contrib.humanize, whose catalogue Django loads
only for an installed app. Nothing imports this module: makemessages reads it.

Same msgids and contexts as humanize's (Django 5.2), so either catalogue serves.
"""

from django.utils.translation import gettext_lazy, ngettext_lazy, npgettext_lazy

TIME_STRINGS = (
    gettext_lazy("%(delta)s ago"),
    ngettext_lazy("an hour ago", "%(count)s hours ago", "count"),
    ngettext_lazy("a minute ago", "%(count)s minutes ago", "count"),
    ngettext_lazy("a second ago", "%(count)s seconds ago", "count"),
    gettext_lazy("now"),
    ngettext_lazy("a second from now", "%(count)s seconds from now", "count"),
    ngettext_lazy("a minute from now", "%(count)s minutes from now", "count"),
    ngettext_lazy("an hour from now", "%(count)s hours from now", "count"),
    gettext_lazy("%(delta)s from now"),
)
PAST = (
    npgettext_lazy("naturaltime-past", "%(num)d year", "%(num)d years", "num"),
    npgettext_lazy("naturaltime-past", "%(num)d month", "%(num)d months", "num"),
    npgettext_lazy("naturaltime-past", "%(num)d week", "%(num)d weeks", "num"),
    npgettext_lazy("naturaltime-past", "%(num)d day", "%(num)d days", "num"),
    npgettext_lazy("naturaltime-past", "%(num)d hour", "%(num)d hours", "num"),
    npgettext_lazy("naturaltime-past", "%(num)d minute", "%(num)d minutes", "num"),
)
FUTURE = (
    npgettext_lazy("naturaltime-future", "%(num)d year", "%(num)d years", "num"),
    npgettext_lazy("naturaltime-future", "%(num)d month", "%(num)d months", "num"),
    npgettext_lazy("naturaltime-future", "%(num)d week", "%(num)d weeks", "num"),
    npgettext_lazy("naturaltime-future", "%(num)d day", "%(num)d days", "num"),
    npgettext_lazy("naturaltime-future", "%(num)d hour", "%(num)d hours", "num"),
    npgettext_lazy("naturaltime-future", "%(num)d minute", "%(num)d minutes", "num"),
)
