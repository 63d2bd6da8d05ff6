"""Where the app's Jinja2 environment finds a template: the host's template DIRS first (an
override is a file of the same name there), then the app's own `articles/jinja2/`.

An override reaches the app's copy the way each engine's users expect: `{% extends
"articles/base.html" %}` inside the host's own `articles/base.html` extends the app's copy,
as Django's recursive extends does for the admin's templates, and `"!articles/base.html"`
names the app's copy from any template, as Sphinx themes name the original of an
overridden template. A template that extended its own name used to load itself forever.

With DEBUG, a template is up to date only while no earlier directory has gained a file of
its name, so a new override is used at the next request; without DEBUG the environment
never asks (auto_reload off) and keeps every compiled template.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from importlib import resources
from pathlib import Path

import jinja2
from django.conf import settings
from jinja2.loaders import split_template_path

APP_PREFIX = "!"  # "!articles/base.html": the app's own copy, whatever the host overrides


class Loader(jinja2.BaseLoader):
    """The host's DIRS, then the app's directory; `!name` looks in the app's alone."""

    def __init__(self, host_dirs: list[str], app_dir: str, *, watch_new: bool) -> None:
        self.dirs = [*host_dirs, app_dir]
        self._loaders = [jinja2.FileSystemLoader(d) for d in self.dirs]
        self._watch_new = watch_new

    def get_source(
        self, environment: jinja2.Environment, template: str
    ) -> tuple[str, str | None, Callable[[], bool] | None]:
        if template.startswith(APP_PREFIX):
            return self._loaders[-1].get_source(environment, template[len(APP_PREFIX) :])
        for index, loader in enumerate(self._loaders):
            try:
                source, filename, uptodate = loader.get_source(environment, template)
            except jinja2.TemplateNotFound:
                continue
            if self._watch_new and index:
                return source, filename, _unless_new(uptodate, self.dirs[:index], template)
            return source, filename, uptodate
        raise jinja2.TemplateNotFound(template)

    def list_templates(self) -> list[str]:
        return sorted({name for loader in self._loaders for name in loader.list_templates()})


def _unless_new(
    uptodate: Callable[[], bool] | None, earlier: list[str], template: str
) -> Callable[[], bool]:
    paths = [os.path.join(d, *split_template_path(template)) for d in earlier]

    def check() -> bool:
        return (uptodate is None or uptodate()) and not any(map(os.path.isfile, paths))

    return check


class Environment(jinja2.Environment):
    """Resolves a template's name against the one that loads it: its own name reaches the
    app's copy (the next one down), so an override can extend what it overrides."""

    def join_path(self, template: str, parent: str) -> str:
        if template == parent:
            return APP_PREFIX + template
        return template


def loader() -> Loader:
    return Loader(host_dirs(), app_dir(), watch_new=bool(settings.DEBUG))


def host_dirs() -> list[str]:
    dirs: list[str] = []
    for backend in getattr(settings, "TEMPLATES", []):
        dirs.extend(str(d) for d in backend.get("DIRS", []))
    return dirs


def app_dir() -> str:
    return str(Path(str(resources.files("articles") / "jinja2")))
