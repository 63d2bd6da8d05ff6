"""Regenerate the app's message catalogues (articles/locale/*/LC_MESSAGES/django.po) from
its sources and compile them (django.mo): `make messages`, or
`python tools/messages.py -l de [-l fr ...]`. Both files are committed: the wheel carries
them, and neither a host nor CI needs gettext.

Django's own makemessages, with one change: the Jinja2 pages (articles/jinja2/**) are read
by Jinja2's i18n extension instead of Django's template lexer, which finds only a bare
`{{ _("...") }}` in them (not `_("... %(n)s", n=x)`, `ngettext`, `pgettext` or
`{% trans %}` blocks). Each message found is written, at its line, as a Python call
xgettext reads with the options makemessages gives it; everything else (Python, the
Django templates of the staff pages and the browsable API, msgmerge into the existing
catalogue, obsolete entries dropped) is makemessages' own. Needs GNU gettext (xgettext,
msgmerge, msguniq, msgfmt), as makemessages does.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import django
import jinja2
from django.conf import settings
from django.core.management.commands import compilemessages, makemessages

APP = Path(__file__).resolve().parent.parent / "articles"
JINJA_DIR = "jinja2"
# Jinja2's names for the calls and what xgettext is told they are: the arguments kept.
_CALLS = {"_": "gettext", "gettext": "gettext", "ngettext": "ngettext"}
_CALLS |= {"pgettext": "pgettext", "npgettext": "npgettext"}


def jinja_as_python(source: str) -> str:
    """The translatable strings of a Jinja2 template as Python calls, each on the line of
    the template it comes from (so the catalogue's references name the right line)."""
    env = jinja2.Environment(extensions=["jinja2.ext.i18n"], autoescape=True)
    lines: dict[int, list[str]] = {}
    for lineno, name, message in env.extract_translations(source):
        strings = [message] if isinstance(message, str) else [m for m in message if m]
        args = ", ".join([repr(s) for s in strings] + (["n"] if "ngettext" in name else []))
        lines.setdefault(lineno, []).append(f"{_CALLS[name]}({args})")
    last = max(lines, default=0)
    return "\n".join("; ".join(lines.get(n, [])) for n in range(1, last + 1)) + "\n"


class JinjaAwareBuildFile(makemessages.BuildFile):
    @property
    def _is_jinja(self) -> bool:
        parts = Path(self.translatable.dirpath).parts
        return JINJA_DIR in parts

    def preprocess(self) -> None:
        if not (self.is_templatized and self._is_jinja):
            super().preprocess()
            return
        source = Path(self.path).read_text(encoding="utf-8")
        Path(self.work_path).write_text(jinja_as_python(source), encoding="utf-8")


class Command(makemessages.Command):
    build_file_class = JinjaAwareBuildFile


def main(argv: list[str]) -> None:
    if not settings.configured:
        settings.configure(USE_I18N=True)
    django.setup()
    os.chdir(APP)  # makemessages writes to the locale/ of the folder it runs in
    Command().run_from_argv(
        ["manage.py", "makemessages", "--add-location=file", "--no-obsolete", *argv]
    )
    compilemessages.Command().run_from_argv(["manage.py", "compilemessages"])


if __name__ == "__main__":
    main(sys.argv[1:] or ["-l", "de"])
