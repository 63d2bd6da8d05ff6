"""An article staff removed answers 410 Gone in the API, with when and why as the
moderation log says, and the schema declares it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from articles.store import services
from tests.actors import staff_actor

pytestmark = pytest.mark.django_db

SCHEMA_FILE = Path(__file__).resolve().parents[2] / "docs" / "openapi.yaml"


def test_an_article_staff_removed_is_gone_with_when_and_why(anon, post):
    article = post()
    services.article_delete(
        article_id=article.id, actor=staff_actor("mod"), reason="Spam ring", now=1_700_000_000
    )
    response = anon.get(f"/api/articles/{article.id}/")
    assert response.status_code == 410
    assert response.json() == {
        "detail": "This article was removed by staff on 2023-11-14 22:13 UTC: Spam ring",
        "code": "article_removed",
        "removed_at": "2023-11-14T22:13:20Z",
        "reason": "Spam ring",
    }
    assert anon.get(f"/api/articles/{article.id + 1000}/").status_code == 404


def test_the_schema_declares_the_410_and_its_fields():
    schema = yaml.safe_load(SCHEMA_FILE.read_text())
    retrieve = schema["paths"]["/api/articles/{id}/"]["get"]["responses"]
    assert retrieve["410"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/Error"
    }
    assert {"removed_at", "reason"} <= set(schema["components"]["schemas"]["Error"]["properties"])
