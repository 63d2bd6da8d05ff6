"""The comment form's fields kept once rendered (articles.web.parts.form_fields): the same
HTML as rendering them, each form with its own idempotency key; a bound form rendered."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.utils import translation

from articles.web import parts, rendering
from articles.web.forms import CommentForm
from tests.factories import article
from tests.web.forms import login, text_of

pytestmark = pytest.mark.django_db


class _Context:
    def __init__(self) -> None:
        self.environment = rendering.environment()


def _rendered(form: CommentForm) -> str:
    return rendering.environment().get_template("articles/_form.html").render(form=form)


@pytest.mark.parametrize("language", ["en", "de"])
def test_kept_fields_are_the_rendered_ones_with_each_forms_own_key(language, monkeypatch):
    monkeypatch.setattr(rendering.environment(), "auto_reload", False)
    with translation.override(language):
        for initial in (None, {"parent": 7}):
            first, second = CommentForm(initial=initial), CommentForm(initial=initial)
            kept = [parts.form_fields(_Context(), f) for f in (first, second)]
            assert kept[0] == _rendered(first) and kept[1] == _rendered(second)
            assert first.initial["idempotency_key"] in kept[0]
            assert second.initial["idempotency_key"] not in kept[0]


def test_forms_built_from_one_initial_dict_each_get_their_own_key():
    initial = {"parent": 7}
    first, second = CommentForm(initial=initial), CommentForm(initial=initial)
    assert first.initial["idempotency_key"] != second.initial["idempotency_key"]
    assert initial == {"parent": 7}  # the caller's dict left as it was
    given = CommentForm(initial={"idempotency_key": "k1"})
    assert given.initial["idempotency_key"] == "k1"


def test_only_the_article_pages_form_is_kept():
    """A reply form's parent would make an entry per comment in the page parts' cache."""
    before = len(parts._parts)
    parts.form_fields(_Context(), CommentForm(initial={"parent": 7}))
    parts.form_fields(_Context(), CommentForm(initial={"parent": 8}))
    assert len(parts._parts) == before


def test_a_bound_form_shows_its_text_and_errors():
    bound = CommentForm({"text": "<b>sent</b>", "idempotency_key": "k1"})
    bound.add_error("text", "Too long")
    html = parts.form_fields(_Context(), bound)
    assert html == _rendered(bound)
    assert "&lt;b&gt;sent&lt;/b&gt;" in html and "Too long" in html


def test_every_article_page_gets_a_fresh_key(make_user):
    ann = make_user("ann")
    a = article(ann)
    client = login(Client(), ann)
    keys = {
        re.search(r'name="idempotency_key" value="(\w+)"', text_of(client.get(f"/a/{a.id}/")))[1]  # type: ignore[index]
        for _ in range(3)
    }
    assert len(keys) == 3
