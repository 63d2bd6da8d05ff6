"""A logout, a password change or a revoked token takes effect at once in every process,
though each process keeps the users of credentials it has seen. Two caches stand for two
processes: the module's own (process A, whose signal receivers it holds) and another
(process B), which shares only the database and Redis with it."""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType

import pytest
from django.conf import settings as django_settings
from django.test import Client, override_settings
from rest_framework.test import APIClient

from articles.api import tokens as api_tokens
from articles.kept import KeptUsers
from articles.store import people, tokens
from articles.web import sessionusers
from tests import factories

pytestmark = pytest.mark.django_db

OTHER_SESSIONS = KeptUsers("session_users_other_process", 100)
OTHER_TOKENS = KeptUsers("api_tokens_other_process", 100)
OUTAGE = KeptUsers("test_outage_sessions", 10)


@contextmanager
def process_b(module: ModuleType, cache: KeptUsers) -> Iterator[None]:
    """Requests made meanwhile are served with process B's kept users."""
    saved = module._cache
    module._cache = cache
    try:
        yield
    finally:
        module._cache = saved


def article_id(user) -> int:  # type: ignore[no-untyped-def]
    return factories.article(user, "Hi", "https://e.org/a").id


def vote(client: Client, aid: int, direction: str) -> int:
    return client.post(
        f"/a/{aid}/vote/", {"direction": direction}, HTTP_ACCEPT="application/json"
    ).status_code


def api_vote(client: APIClient, aid: int, direction: str) -> int:
    answer = client.put(f"/api/articles/{aid}/vote/", {"value": direction}, format="json")
    return answer.status_code


def test_a_session_logged_out_in_one_process_stops_at_once_in_another(
    make_user, django_assert_num_queries
):
    aid = article_id(make_user())
    client = Client()
    client.force_login(make_user())
    cookie = client.cookies["sessionid"].value
    with process_b(sessionusers, OTHER_SESSIONS):
        assert vote(client, aid, "up") == 200
        with django_assert_num_queries(0):
            assert vote(client, aid, "down") == 200  # kept in B
    assert cookie in OTHER_SESSIONS.entries
    client.post("/accounts/logout/")  # in process A
    replay = Client()
    replay.cookies["sessionid"] = cookie
    with process_b(sessionusers, OTHER_SESSIONS):
        assert vote(replay, aid, "none") == 401
    assert cookie not in OTHER_SESSIONS.entries


def test_a_password_changed_in_one_process_logs_out_another_processes_sessions(make_user):
    ann = make_user()
    aid = article_id(make_user())
    elsewhere = Client()
    elsewhere.force_login(ann)
    with process_b(sessionusers, OTHER_SESSIONS):
        assert vote(elsewhere, aid, "up") == 200
        assert vote(elsewhere, aid, "down") == 200
    ann.set_password("Brand-new-99")
    ann.save()  # in process A (a page, the admin, changepassword)
    with process_b(sessionusers, OTHER_SESSIONS):
        assert vote(elsewhere, aid, "none") == 401


def test_a_token_revoked_in_one_process_stops_at_once_in_another(make_user):
    bob = make_user()
    aid = article_id(make_user())
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {tokens.token_create(user=bob)}")
    with process_b(api_tokens, OTHER_TOKENS):
        assert api_vote(api, aid, "up") == 200
        assert api_vote(api, aid, "down") == 200
    assert len(OTHER_TOKENS.entries) == 1
    tokens.user_tokens_revoke(user=bob)  # in process A (the account page, the API)
    with process_b(api_tokens, OTHER_TOKENS):
        assert api_vote(api, aid, "none") == 401
    assert len(OTHER_TOKENS.entries) == 0


def test_a_token_revoked_on_the_account_page_stops_at_once_in_another_process(make_user):
    bob = make_user()
    aid = article_id(make_user())
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {tokens.token_create(user=bob)}")
    with process_b(api_tokens, OTHER_TOKENS):
        assert api_vote(api, aid, "up") == 200
    page = Client()
    page.force_login(bob)
    assert page.post("/accounts/tokens/").status_code == 302
    with process_b(api_tokens, OTHER_TOKENS):
        assert api_vote(api, aid, "down") == 401


def test_credentials_read_long_after_a_revocation_are_kept_again(make_user):
    bob = make_user()
    aid = article_id(make_user())
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {tokens.token_create(user=bob)}")
    bob.is_active = False
    bob.save()
    bob.is_active = True
    bob.save()
    assert api_vote(api, aid, "up") == 200
    assert len(api_tokens._kept) == 1


def test_with_redis_unreachable_no_kept_credential_is_honoured(make_user, tmp_path):
    bob = make_user()
    kept = OUTAGE
    caches = {alias: dict(config) for alias, config in django_settings.CACHES.items()}
    caches["articles"]["LOCATION"] = f"unix://{tmp_path}/nothing-here.sock"
    with override_settings(CACHES=caches):
        kept.keep("key", bob, None, read_at=time.time() - 60, expires=time.monotonic() + 60)
        assert people.credential_epoch(bob.pk) == math.inf
        assert kept.get("key") is None  # the caller asks the database, as with no cache
    kept.keep("key", bob, None, read_at=time.time() - 60, expires=time.monotonic() + 60)
    assert kept.get("key") == (bob, None)
