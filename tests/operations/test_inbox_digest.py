"""manage.py inbox_digest: the opted-in users' unread replies by e-mail (Django's locmem
backend), once each, never a read one, and none for who did not ask."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core import mail
from django.core.management import call_command
from django.core.management.base import CommandError

from articles import conf
from articles.store import people, selectors, services
from tests.factories import article, comment
from tests.harness import redis_down

pytestmark = pytest.mark.django_db

BASE = "https://news.example.org"


def digest(*extra: str) -> str:
    out = StringIO()
    call_command("inbox_digest", "--base-url", BASE, *extra, stdout=out)
    return out.getvalue()


def opt_in(user, on: bool = True, email: str = "") -> None:  # type: ignore[no-untyped-def]
    people.account_update(
        user=user, about="", email=email or f"{user.get_username()}@example.org", inbox_digest=on
    )


@pytest.fixture
def ann_and_bob(make_user):  # type: ignore[no-untyped-def]
    ann, bob = make_user("ann"), make_user("bob")
    return ann, bob, article(ann, title="Sorted & sets")


def test_the_digest_is_off_by_default(ann_and_bob):
    ann, bob, a = ann_and_bob
    comment(bob, a.id, "hi")
    assert people.profile_of(ann).inbox_digest is False
    assert "Sent 0 digest(s)" in digest() and mail.outbox == []


def test_an_opted_in_user_gets_their_unread_replies_once(ann_and_bob):
    ann, bob, a = ann_and_bob
    opt_in(ann)
    first = comment(bob, a.id, "First & *best*")
    comment(ann, a.id, "my own, not a reply to me")
    assert "Sent 1 digest(s)" in digest()
    [message] = mail.outbox
    assert (
        message.to == ["ann@example.org"]
        and message.subject == f"1 new reply on {conf.site_name()}"
    )
    assert "bob on “Sorted & sets”:" in message.body and "First & *best*" in message.body
    assert f"{BASE}/a/{a.id}/c/{first.id}/" in message.body
    assert f"{BASE}/inbox/" in message.body and f"{BASE}/accounts/settings/" in message.body
    digest()
    assert len(mail.outbox) == 1  # sent once
    comment(bob, a.id, "second")
    digest()
    assert len(mail.outbox) == 2 and "second" in mail.outbox[1].body
    assert "First" not in mail.outbox[1].body
    assert selectors.inbox_unread(user_id=ann.pk) == 2  # a digest marks nothing read


def test_a_reply_read_on_the_site_or_deleted_is_not_sent(ann_and_bob):
    from tests.actors import member_actor

    ann, bob, a = ann_and_bob
    opt_in(ann)
    comment(bob, a.id, "read already")
    services.inbox_mark_read(user_id=ann.pk)
    gone = comment(bob, a.id, "regretted")
    services.comment_delete(comment_id=gone.id, actor=member_actor(bob.pk, "bob"))
    digest()
    assert mail.outbox == []


def test_no_address_no_digest_and_turning_it_off_stops_it(ann_and_bob):
    ann, bob, a = ann_and_bob
    people.account_update(user=ann, about="", email="", inbox_digest=True)
    comment(bob, a.id, "hi")
    digest()
    assert mail.outbox == []
    opt_in(ann, on=False)
    digest()
    assert mail.outbox == []
    opt_in(ann)
    digest()
    assert len(mail.outbox) == 1


def test_a_failed_send_is_sent_again_next_run(ann_and_bob, settings):
    ann, bob, a = ann_and_bob
    opt_in(ann)
    comment(bob, a.id, "hi")
    settings.EMAIL_BACKEND = "tests.operations.test_inbox_digest.Refusing"
    with pytest.raises(CommandError, match="1 digest"):
        digest()
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    digest()
    assert len(mail.outbox) == 1


def test_a_bad_base_url_and_redis_down_are_clear_errors(ann_and_bob):
    ann, _, _ = ann_and_bob
    opt_in(ann)
    with pytest.raises(CommandError, match="base-url"):
        call_command("inbox_digest", "--base-url", "news.example.org", stdout=StringIO())
    with redis_down(), pytest.raises(CommandError, match="run it again"):
        digest()


class Refusing:
    """An e-mail backend whose server refuses every message."""

    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        pass

    def send_messages(self, messages):  # type: ignore[no-untyped-def]
        raise ConnectionRefusedError("no SMTP server")
