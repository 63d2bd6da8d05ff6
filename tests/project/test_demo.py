"""`manage.py load_demo`, which `make run` calls on a fresh machine."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from articles import selectors
from articles.management.commands.load_demo import ARTICLES
from articles.types import Order


@pytest.mark.django_db
def test_the_demo_loads_into_an_empty_store_with_its_good_articles(settings):
    """Ensure every demo vote lands inside its article's voting window, which Redis' own
    clock judges: an article posted more than a week ago refuses votes."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    out = io.StringIO()
    call_command("load_demo", "--if-empty", stdout=out)
    assert "Loaded" in out.getvalue()
    assert selectors.article_list(order=Order.TIME).count == len(ARTICLES)
    assert selectors.good_article_page().count >= 1
    front = selectors.front_page()
    assert len(front.items) + len(front.rising) >= 20  # a first visit sees a full page
    call_command("load_demo", "--if-empty", stdout=out)
    assert "not loaded" in out.getvalue()
