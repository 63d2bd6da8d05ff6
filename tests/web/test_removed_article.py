"""An old link to an article staff removed answers 410 Gone, saying when and why as the
moderation log does; one never posted, or deleted by its poster, stays a plain 404."""

from __future__ import annotations

import pytest

from articles.store import services
from tests.actors import member_actor, staff_actor
from tests.factories import article

pytestmark = pytest.mark.django_db

REMOVED_AT = 1_700_000_000  # 2023-11-14 22:13:20 UTC


def test_an_old_link_to_an_article_staff_removed_says_when_and_why(client, make_user):
    a = article(make_user("ann"))
    services.article_delete(
        article_id=a.id, actor=staff_actor("mod"), reason="Spam ring", now=REMOVED_AT
    )
    response = client.get(f"/a/{a.id}/")
    assert response.status_code == 410
    html = response.content.decode()
    assert "Removed" in html
    assert "removed by staff on 2023-11-14 22:13 UTC: Spam ring" in html
    assert "No such article" not in html


def test_an_article_its_poster_deleted_or_never_posted_is_still_not_found(client, make_user):
    ann = make_user("ann")
    a = article(ann)
    services.article_delete(article_id=a.id, actor=member_actor(ann.pk, "ann"))
    for path in (f"/a/{a.id}/", f"/a/{a.id + 1000}/"):
        response = client.get(path)
        assert response.status_code == 404, path
        assert "No such article" in response.content.decode(), path
