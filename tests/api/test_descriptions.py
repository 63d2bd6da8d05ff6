"""Every operation of the API is described for the people who call it: a summary and a
description of its own, never a docstring (those are notes for developers, and
drf-spectacular shows the view's when an operation has no description), each saying who may
call it and the rate limits it counts in."""

from __future__ import annotations

import inspect
import io
from collections.abc import Iterator
from typing import Any

import yaml
from django.core.management import call_command
from django.urls import URLPattern, URLResolver, get_resolver

from articles.store import ratelimits


def generated_schema() -> dict[str, Any]:
    out = io.StringIO()
    call_command("spectacular", stdout=out, skip_checks=True)
    loaded: dict[str, Any] = yaml.safe_load(out.getvalue())
    return loaded


def operations(schema: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            if method != "parameters":
                yield f"{method.upper()} {path}", operation


def view_classes(patterns: list[Any]) -> Iterator[type]:
    for entry in patterns:
        if isinstance(entry, URLResolver):
            yield from view_classes(entry.url_patterns)
        elif isinstance(entry, URLPattern):
            view = getattr(entry.callback, "cls", None) or getattr(
                entry.callback, "view_class", None
            )
            if view is not None:
                yield view


def docstrings() -> set[str]:
    """The docstring of every view class the URLconf reaches, of their bases and of their
    methods: what drf-spectacular falls back on."""
    found = set()
    for view in view_classes(get_resolver().url_patterns):
        for cls in inspect.getmro(view):
            for item in (cls, *vars(cls).values()):
                doc = inspect.getdoc(item)
                if doc and len(doc) > 20:
                    found.add(" ".join(doc.split()))
    return found


def test_every_operation_has_a_description_for_api_users_not_a_docstring() -> None:
    schema = generated_schema()
    notes = docstrings()
    assert len(notes) > 20  # the search does see the views' docstrings
    ops = dict(operations(schema))
    assert len(ops) >= 21
    problems = []
    for name, operation in ops.items():
        summary = operation.get("summary", "")
        description = " ".join(operation.get("description", "").split())
        if not summary:
            problems.append(f"{name}: no summary")
        if len(description) < 120:
            problems.append(f"{name}: too short a description: {description!r}")
        for note in notes:
            if note in description or description in note:
                problems.append(f"{name}: a docstring as its description: {note[:60]!r}")
        if "**Who:**" not in description:
            problems.append(f"{name}: does not say who may call it")
        if "**Rate limits**" not in description:
            problems.append(f"{name}: does not give its rate limits")
    assert not problems, "\n".join(problems)


def test_who_may_call_an_operation_matches_what_it_answers() -> None:
    """Staff-only operations say so and answer 403; those that need a login answer 401;
    those open to anyone declare no 403 for lack of rights."""
    for name, operation in operations(generated_schema()):
        description = operation["description"]
        answers = operation["responses"]
        if "staff only" in description or "staff, or the article's poster" in description:
            assert {"401", "403"} <= set(answers), name
        elif "a logged-in user" in description:
            assert "401" in answers, name
        else:
            assert "anyone" in description, name


def test_the_rate_limits_given_are_the_defaults() -> None:
    vote = generated_schema()["paths"]["/api/articles/{id}/vote/"]["put"]["description"]
    rule = ratelimits.DEFAULT_RULES["vote"]
    assert f"{rule.limit} votes a minute per user" in vote
    general = ratelimits.DEFAULT_RULES["api"]
    assert f"{general.limit} requests a minute per client address" in vote
