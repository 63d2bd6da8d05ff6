"""bench/templates.py compares renderers on the same page: each variant renders exactly
the app's page from the context the view built."""

from __future__ import annotations

import random
import time

import pytest

from bench import comments, templates
from tests.factories import article


@pytest.mark.django_db
def test_every_variant_renders_the_apps_page(client, make_user) -> None:
    reader = make_user("reader")
    for n in range(3):
        article(reader, title=f"Listed {n}", link=f"https://example.org/{n}")
    comments.post_thread(1, 12, random.Random(5), time.time())
    client.force_login(reader)
    for path, shown in (("/", "Listed 2"), ("/a/1/", 'class="comment"')):
        name, context, request = templates.captured(client, path)
        pages = {
            label: templates.same(render())
            for label, render in templates.variants(name, context, request).items()
        }
        assert len(set(pages.values())) == 1, path
        assert shown in next(iter(pages.values()))
