"""The OpenAPI schema: committed, served, documented from our own static files, and obeyed
by the API under schemathesis' generated requests."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
import schemathesis
import yaml
from django.core.handlers.wsgi import WSGIHandler
from django.core.management import call_command
from hypothesis import HealthCheck, Phase, settings
from schemathesis.specs.openapi.checks import negative_data_rejection, positive_data_acceptance

from articles.store import services, tokens
from articles.types import NewPost
from tests.actors import staff_actor

SCHEMA_FILE = Path(__file__).resolve().parents[2] / "docs" / "openapi.yaml"


def test_the_committed_schema_is_what_the_code_generates():
    """Ensure API changes show up in review: regenerate with
    `make schema`."""
    out = io.StringIO()
    call_command("spectacular", stdout=out, skip_checks=True)
    assert out.getvalue() == SCHEMA_FILE.read_text()


@pytest.mark.django_db
@pytest.mark.usefixtures("clock")
def test_the_schema_is_served_as_openapi_3_with_every_endpoint(anon):
    response = anon.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    schema = response.json()
    assert schema == yaml.safe_load(SCHEMA_FILE.read_text())
    assert schema["openapi"].startswith("3.")
    assert set(schema["paths"]) == {
        "/api/articles/",
        "/api/articles/{id}/",
        "/api/articles/{id}/comments/",
        "/api/articles/{id}/groups/",
        "/api/articles/{id}/hide/",
        "/api/articles/{id}/save/",
        "/api/articles/{id}/vote/",
        "/api/articles/good/",
        "/api/articles/hidden/",
        "/api/articles/saved/",
        "/api/articles/search/",
        "/api/articles/top/",
        "/api/articles/upvoted/",
        "/api/auth/token/",
        "/api/comments/",
        "/api/comments/{id}/",
        "/api/comments/{id}/remove/",
        "/api/comments/{id}/replies/",
        "/api/comments/{id}/save/",
        "/api/comments/{id}/vote/",
        "/api/comments/saved/",
        "/api/comments/search/",
        "/api/groups/",
        "/api/groups/{name}/",
        "/api/groups/{name}/articles/",
        "/api/users/{username}/",
        "/api/inbox/",
        "/api/inbox/read/",
        "/api/inbox/unread/",
        "/api/users/{username}/articles/",
        "/api/users/{username}/comments/",
        "/api/modlog/",
        "/api/stats/",
        "/api/domains/{domain}/articles/",
        "/api/articles/{id}/flag/",
        "/api/comments/{id}/flag/",
        "/api/flags/",
        "/api/flags/{kind}/{id}/resolve/",
        "/api/flags/{kind}/{id}/dismiss/",
    }
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            if method == "parameters":
                continue
            assert {"429", "503"} <= set(operation["responses"]), (method, path)


@pytest.mark.usefixtures("clock")
def test_the_schema_declares_the_answers_and_headers_any_operation_can_give():
    """Ensure a generated client meets no undeclared status or header: 401 for a bad token
    wherever one is read, 405 with Allow, 406, RateLimit-*, Retry-After and Location."""
    schema = yaml.safe_load(SCHEMA_FILE.read_text())
    headers = schema["components"]["headers"]
    assert set(headers) == {"RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"}
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            if method == "parameters":
                continue
            where, responses = (method, path), operation["responses"]
            assert {"405", "406"} <= set(responses), where
            reads_a_token = any(operation.get("security", []))
            assert ("401" in responses) == reads_a_token, where
            assert responses["405"]["headers"]["Allow"]["required"] is True, where
            assert responses["429"]["headers"]["Retry-After"]["required"] is True, where
            assert "Retry-After" in responses["503"]["headers"], where
            for response in responses.values():
                assert {"RateLimit-Limit", "RateLimit-Reset"} <= set(response["headers"]), where
    for path in ("/api/articles/", "/api/articles/{id}/comments/"):
        created = schema["paths"][path]["post"]["responses"]["201"]
        assert created["headers"]["Location"]["required"] is True, path
    token = schema["paths"]["/api/auth/token/"]["post"]
    assert list(token["requestBody"]["content"]) == ["application/json"]
    assert token["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/TokenRequest"
    }
    assert set(schema["components"]["schemas"]["TokenRequest"]["properties"]) == {
        "username",
        "password",
    }


@pytest.mark.django_db
def test_the_docs_page_loads_its_scripts_from_our_own_static_files(anon):
    page = anon.get("/api/docs/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js" in html
    assert "cdn" not in html.lower() and "unpkg" not in html.lower()
    for asset in ("swagger-ui-bundle.js", "swagger-ui.css"):
        served = anon.get(f"/static/drf_spectacular_sidecar/swagger-ui-dist/{asset}")
        assert served.status_code == 200, asset


# --- schemathesis -----------------------------------------------------------------------------


@pytest.fixture
def _fuzz_settings(settings):  # type: ignore[no-untyped-def]
    # Generated requests come fast; the limits themselves are tested elsewhere.
    settings.ARTICLES_RATE_LIMITS = {
        "api": None,
        "api_user": None,
        "api_write": None,
        "post": None,
        "vote": None,
        "comment": None,
    }


@pytest.fixture(params=["staff", "anonymous"])
def caller_headers(request, make_user, _fuzz_settings) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """Headers of a staff member (who may call everything) or of nobody (401s)."""
    staff = make_user("fuzz-staff", staff=True)
    services.group_create(name="redis", description="A group to find", actor=staff_actor())
    seed = services.article_post(
        NewPost(
            user_id=staff.pk, poster_name=staff.username, title="Seed", link="https://example.org/"
        )
    )
    top = services.comment_post(
        article_id=seed.id, user_id=staff.pk, author_name=staff.username, text="Seed comment"
    )
    services.comment_post(
        article_id=seed.id,
        user_id=staff.pk,
        author_name=staff.username,
        text="Seed reply",
        parent_id=top.id,
    )
    if request.param == "anonymous":
        return {}
    return {"Authorization": f"Token {tokens.token_create(user=staff)}"}


# Operations with rules tying fields together (or to the store), beyond what their JSON
# Schema says: a schema-valid body can rightly get 400 there, so schemathesis' check that
# valid data is accepted is off for them (each rule has its own test in test_articles.py).
# tests/api/schemathesis.toml names the same operations for the CLI run below.
CROSS_FIELD_RULES = {
    ("POST", "/api/articles/"): "give a link, a text, or both",
    ("PUT", "/api/articles/{id}/"): "an article without a text needs a link",
    ("PATCH", "/api/articles/{id}/"): "an article without a text needs a link",
    ("POST", "/api/articles/{id}/groups/"): "no group may be both added and removed",
    ("POST", "/api/articles/{id}/comments/"): "a parent on this article; a key is one request",
    ("POST", "/api/auth/token/"): "made-up credentials are refused",
    ("GET", "/api/articles/search/"): "a query needs a word that is not a stop word, 8 at most",
    ("GET", "/api/comments/search/"): "a query needs a word that is not a stop word, 8 at most",
    ("GET", "/api/articles/{id}/"): "an article staff removed is gone (410)",
}

# The committed file, which the tests above prove equal to what /api/schema/ serves.
# (schemathesis.pytest.from_fixture, which would load /api/schema/ itself, fails on
# pytest 9.2 with schemathesis 4.32.5: it reads the removed `Function._nodeid`.)
schema = schemathesis.openapi.from_path(SCHEMA_FILE)
schema.app = WSGIHandler()


@schema.parametrize()
@settings(
    # Bounded for the suite (about 30 s on 2 cores); raise API_FUZZ_EXAMPLES for a deeper run.
    max_examples=int(os.environ.get("API_FUZZ_EXAMPLES", "10")),
    deadline=None,
    derandomize="API_FUZZ_EXAMPLES" not in os.environ,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
)
def test_generated_requests_get_no_500_and_responses_match_the_schema(case, caller_headers):
    """Ensure no generated request, valid or not, gets a 500 or an off-schema answer."""
    excluded = [negative_data_rejection]  # unknown query parameters are ignored by design
    if (case.method.upper(), case.path) in CROSS_FIELD_RULES:
        excluded.append(positive_data_acceptance)
    case.call_and_validate(headers=caller_headers, excluded_checks=excluded)


# --- schemathesis' CLI, every check, on a live server ---------------------------------------

CLI_CONFIG = Path(__file__).with_name("schemathesis.toml")


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_schemathesis_cli_with_every_check_passes_on_a_live_server(
    caller_headers, live_server, tmp_path
):
    """Ensure the committed schema holds for a client that checks everything schemathesis
    can (`--checks all`: statuses, content types, headers, bodies, valid data accepted,
    invalid data refused, auth not ignored, deleted things gone, unsupported methods), as
    the README's fuzzing command runs it. tests/api/schemathesis.toml turns off, for a few
    operations only, the check that schema-valid data is accepted: each has a rule across
    fields, requests or the store that JSON Schema cannot say."""
    command = [
        str(Path(sys.executable).with_name("schemathesis")),
        "--no-color",
        "--config-file",
        str(CLI_CONFIG),
        "run",
        str(SCHEMA_FILE),
        "--url",
        live_server.url,
        "--checks",
        "all",
        # Bounded for the suite; raise API_FUZZ_EXAMPLES for a deeper, random run.
        "--max-examples",
        os.environ.get("API_FUZZ_EXAMPLES", "5"),
        "--workers",
        "1",
        "--continue-on-failure",
        "--request-timeout",
        "10",
    ]
    if "API_FUZZ_EXAMPLES" not in os.environ:
        command += ["--seed", "1"]
    for name, value in caller_headers.items():
        command += ["--header", f"{name}: {value}"]
    if caller_headers:
        # Revoking the caller's own token would turn the rest of the run into 401s.
        command += ["--exclude-operation-id", "auth_token_destroy"]
    result = subprocess.run(
        command, capture_output=True, text=True, cwd=tmp_path, timeout=300, check=False
    )
    assert result.returncode == 0, result.stdout[-30000:] + result.stderr[-5000:]
