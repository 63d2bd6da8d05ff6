"""A host's template overrides, as a Django project makes them: files in its TEMPLATES
DIRS that extend the app's own copy, fill its blocks, see the host's context processors,
and (with DEBUG) are used as soon as they exist."""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jinja2
import pytest
from django.conf import settings
from django.db import DatabaseError
from django.http import HttpRequest
from django.test import override_settings

from articles.store.connection import get_connection
from articles.web import rendering
from tests.factories import article

pytestmark = pytest.mark.django_db

CSRF = re.compile(r'name="csrfmiddlewaretoken" value="[^"]+"')  # masked anew each time
AGES = re.compile(r"(<time [^>]*>)[^<]*(</time>)")  # "now", then "a second ago"
SINCE = re.compile(r'data-live-since="[0-9]+"')  # the render time (articles.web.livepage)


def brand(request: HttpRequest) -> dict[str, Any]:
    """A host's context processor."""
    return {"brand": "Acme Reading Room", "articles": "not the page's"}


def broken(request: HttpRequest) -> dict[str, Any]:
    """A host's context processor that needs its database, which is down."""
    raise DatabaseError("the host's database is down")


def _templates(directory: Path, *processors: str) -> list[dict[str, Any]]:
    """The suite's TEMPLATES, with `directory` as DIRS and `processors` added."""
    templates = copy.deepcopy(settings.TEMPLATES)
    templates[0]["DIRS"] = [str(directory)]
    templates[0]["OPTIONS"]["context_processors"] += list(processors)
    return templates


def _write(directory: Path, name: str, text: str) -> None:
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def host_dir(tmp_path: Path) -> Iterator[Path]:
    with override_settings(TEMPLATES=_templates(tmp_path), ARTICLES_ANONYMOUS_PAGE_SECONDS=0):
        yield tmp_path


def test_an_override_extends_the_apps_template_of_its_own_name(client, make_user, host_dir):
    _write(
        host_dir,
        "articles/base.html",
        '{% extends "articles/base.html" %}'
        '{% block brand %}<a class="brand" href="/">Acme</a>{% endblock %}'
        '{% block extra_head %}<meta name="host" content="acme">{% endblock %}'
        "{% block footer %}<footer>Acme footer</footer>{% endblock %}",
    )
    article(make_user("ann"), title="Sorted sets at work")
    page = client.get("/")
    assert page.status_code == 200
    text = page.content.decode()
    assert '<a class="brand" href="/">Acme</a>' in text
    assert '<meta name="host" content="acme"></head>' in text
    assert "<footer>Acme footer</footer>" in text and "Redis in Action" not in text
    # the app's page around the host's blocks: its navigation, its listing
    assert "Sorted sets at work" in text and 'aria-current="page">Home</a>' in text


def test_the_bang_name_reaches_the_apps_copy_from_any_override(client, host_dir):
    _write(
        host_dir,
        "articles/base.html",
        '{% extends "!articles/base.html" %}'
        "{% block nav %}{{ super() }}<a href='/about/'>About</a>{% endblock %}",
    )
    text = client.get("/").content.decode()
    assert "</ul><a href='/about/'>About</a>" in text  # the app's links, then the host's


def test_a_template_extending_its_own_name_is_never_a_loop(host_dir):
    # With an app's copy the name reaches it (above); without one, a clear not-found.
    _write(host_dir, "articles/own.html", '{% extends "articles/own.html" %}')
    with pytest.raises(jinja2.TemplateNotFound, match=re.escape("articles/own.html")):
        rendering.render_to_string("articles/own.html")


def test_the_hosts_context_processors_run_for_the_apps_pages(client, make_user, tmp_path):
    processor = f"{__name__}.brand"
    _write(
        tmp_path,
        "articles/base.html",  # a whole base of the host's own, as before: no extends
        "<p class='brand'>{{ brand }}</p>{% block content %}{% endblock %}",
    )
    article(make_user("ann"), title="Sorted sets at work")
    with override_settings(
        TEMPLATES=_templates(tmp_path, processor), ARTICLES_ANONYMOUS_PAGE_SECONDS=0
    ):
        text = client.get("/").content.decode()
    assert "<p class='brand'>Acme Reading Room</p>" in text
    # the page's own values win a name both give: the listing is still the listing
    assert "Sorted sets at work" in text


def test_a_failing_processor_leaves_a_503_a_503(client, make_user, tmp_path):
    shown = article(make_user("ann"), title="Sorted sets at work")
    get_connection().hset(f"article:{shown.id}", "time", "inf")  # its page: a 503
    with override_settings(TEMPLATES=_templates(tmp_path, f"{__name__}.broken")):
        page = client.get(f"/a/{shown.id}/")
    assert page.status_code == 503
    assert b"<!doctype html>" in page.content  # the app's own page, without their values


def test_the_default_processors_leave_the_pages_as_they_were(client, make_user, tmp_path):
    ann = make_user("ann")
    article(ann, title="Sorted sets at work")
    client.force_login(ann)
    defaults = [  # what `startproject` writes
        "django.template.context_processors.debug",
        "django.template.context_processors.request",
        "django.contrib.auth.context_processors.auth",
        "django.contrib.messages.context_processors.messages",
    ]
    pages = []
    for processors in ([], defaults):
        templates = _templates(tmp_path)
        templates[0]["OPTIONS"]["context_processors"] = processors
        with override_settings(TEMPLATES=templates):
            page = CSRF.sub("", client.get("/").content.decode())
            pages.append(SINCE.sub("", AGES.sub(r"\1\2", page)))
    assert pages[0] == pages[1]


def test_with_debug_a_new_override_is_used_at_the_next_request(client, host_dir):
    with override_settings(DEBUG=True):
        assert "Host base" not in client.get("/").content.decode()
        _write(host_dir, "articles/base.html", "Host base{% block content %}{% endblock %}")
        assert client.get("/").content.decode().startswith("Host base")
        # and a new override of an include, one level down
        _write(host_dir, "articles/_pager.html", "<nav>Host pager</nav>")
        assert "Host pager" in client.get("/").content.decode()


def test_without_debug_the_compiled_templates_are_kept(client, host_dir):
    client.get("/")
    _write(host_dir, "articles/base.html", "Host base{% block content %}{% endblock %}")
    assert "Host base" not in client.get("/").content.decode()


def test_the_staff_pages_django_templates_extend_the_django_way(client, make_user, host_dir):
    _write(
        host_dir,
        "articles/staff/base.html",
        '{% extends "articles/staff/base.html" %}'
        "{% block branding %}<h1>Acme desk</h1>{% endblock %}",
    )
    client.force_login(make_user("root", staff=True))
    page = client.get("/staff/")
    assert page.status_code == 200
    text = page.content.decode()
    assert "<h1>Acme desk</h1>" in text and 'class="object-tools staff-tools"' in text
