"""Accounts: the vote asked for while logged out, login throttling, e-mail and password
reset, look-alike names, user pages and karma, and deleting an account."""

from __future__ import annotations

import re
import time

import pytest
import redis
from django.contrib.auth import get_user_model
from django.core import mail, signing
from django.db import IntegrityError, transaction
from django.test import Client
from rest_framework.test import APIClient

from articles import names
from articles.models import Profile
from articles.store import keys, logins, people, selectors, services
from articles.store.connection import get_connection
from articles.types import DELETED_NAME, Vote
from articles.web import intents
from tests.factories import article

pytestmark = pytest.mark.django_db
PASSWORD = "pw-Secret-123"


def intent_of(page: str) -> str:
    match = re.search(r'name="intent" value="([^"]+)"', page)
    assert match, "the form carries no intent"
    return match.group(1)


def login_page_for_vote(client: Client, article_id: int, direction: str = "up") -> str:
    response = client.get(
        "/accounts/login/", {"next": "/new/", "vote_on": article_id, "direction": direction}
    )
    assert response.status_code == 200
    return response.content.decode()


# --- the vote asked for while logged out -------------------------------------------------


def test_logged_out_vote_arrow_leads_to_a_login_page_that_says_why(client, make_user):
    a = article(make_user("ann"), title="Sorted sets")
    listing = client.get("/new/").content.decode()
    assert f"vote_on={a.id}&amp;direction=up" in listing
    page = login_page_for_vote(client, a.id)
    assert "Log in to vote." in page
    assert "up-vote on “<a" in page and "Sorted sets" in page
    assert intent_of(page)
    # Showing the page casts nothing.
    assert selectors.article_get(article_id=a.id).votes == 1


def test_logging_in_casts_the_intended_vote_and_returns_to_the_item(client, make_user):
    a = article(make_user("ann"))
    make_user("bob")
    token = intent_of(login_page_for_vote(client, a.id, "down"))
    response = client.post(
        "/accounts/login/",
        {"username": "bob", "password": PASSWORD, "next": "/new/", "intent": token},
    )
    assert response.status_code == 302
    assert response["Location"] == f"/new/#a{a.id}"
    assert selectors.article_get(article_id=a.id).downvotes == 1
    page = client.get(response["Location"]).content.decode()
    assert "Your down-vote on “Hello world” is counted." in page


def test_signing_up_casts_the_intended_vote(client, make_user):
    a = article(make_user("ann"))
    token = intent_of(login_page_for_vote(client, a.id))
    signup = client.get("/signup/", {"next": "/new/", "intent": token}).content.decode()
    assert "Sign up to vote." in signup and intent_of(signup) == token
    response = client.post(
        "/signup/",
        {
            "username": "newbie",
            "password1": PASSWORD,
            "password2": PASSWORD,
            "next": "/new/",
            "intent": token,
        },
    )
    assert response.status_code == 302 and response["Location"] == f"/new/#a{a.id}"
    assert selectors.article_get(article_id=a.id).votes == 2
    page = client.get("/new/").content.decode()
    assert "Your account is made." in page and "You are logged in" not in page
    assert 'name="password"' not in page  # no login form after signing up


def test_an_intent_is_cast_once(make_user):
    a = article(make_user("ann"))
    bob, cid = make_user("bob"), make_user("cid")
    first = services.vote_intent_cast(
        nonce="n" * 22, ttl=60, article_id=a.id, user_id=bob.pk, direction=Vote.UP
    )
    again = services.vote_intent_cast(
        nonce="n" * 22, ttl=60, article_id=a.id, user_id=cid.pk, direction=Vote.UP
    )
    assert first is not None and first.votes == 2 and again is None
    repeat = services.vote_intent_cast(  # bob's retry: the same vote, nothing changes
        nonce="n" * 22, ttl=60, article_id=a.id, user_id=bob.pk, direction=Vote.UP
    )
    assert repeat is not None and repeat.votes == 2
    assert selectors.article_get(article_id=a.id).votes == 2
    assert 0 < get_connection().ttl(keys.vote_intent("n" * 22)) <= 60


def test_an_intent_from_another_browser_or_tampered_is_ignored(make_user):
    a = article(make_user("ann"))
    make_user("bob")
    attacker, victim = Client(), Client()
    token = intent_of(login_page_for_vote(attacker, a.id))
    victim.get("/accounts/login/")  # the victim's own CSRF cookie
    for forged in (token, token[:-2] + "xx"):
        response = victim.post(
            "/accounts/login/",
            {"username": "bob", "password": PASSWORD, "next": "/new/", "intent": forged},
        )
        assert response.status_code == 302 and response["Location"] == "/new/"
        victim.logout()
        victim.get("/accounts/login/")
    assert selectors.article_get(article_id=a.id).votes == 1


def test_an_intent_is_not_honoured_from_a_get(client, make_user):
    a = article(make_user("ann"))
    token = intent_of(login_page_for_vote(client, a.id))
    client.force_login(make_user("bob"))
    client.get("/accounts/login/", {"intent": token})
    client.get("/signup/", {"intent": token})
    assert selectors.article_get(article_id=a.id).votes == 1


class _HourOldSigner(signing.TimestampSigner):
    def timestamp(self) -> str:
        return signing.b62_encode(int(time.time()) - 3600)


def test_an_expired_intent_is_ignored(client, make_user, settings):
    a = article(make_user("ann"))
    make_user("bob")
    fresh = intent_of(login_page_for_vote(client, a.id))
    payload = signing.loads(fresh, salt=intents.SALT)
    settings.ARTICLES_VOTE_INTENT_SECONDS = 1800
    old = _HourOldSigner(salt=intents.SALT).sign_object(payload, compress=True)
    client.post("/accounts/login/", {"username": "bob", "password": PASSWORD, "intent": old})
    assert selectors.article_get(article_id=a.id).votes == 1


# --- login throttling --------------------------------------------------------------------


def _login(client: Client, username: str, password: str, **extra):  # type: ignore[no-untyped-def]
    return client.post("/accounts/login/", {"username": username, "password": password}, **extra)


@pytest.mark.usefixtures("clock")
def test_eighty_wrong_passwords_then_the_right_one_is_refused_while_locked(client, make_user):
    make_user("dave")
    statuses = [_login(client, "dave", f"wrong{i}").status_code for i in range(80)]
    assert statuses[:5] == [400] * 5 and set(statuses[5:]) == {429}
    response = _login(client, "dave", PASSWORD)
    assert response.status_code == 429
    assert response["Retry-After"] == "900"
    page = response.content.decode()
    assert "Too many failed logins for this account: at most 5 every 15 minutes." in page
    assert "_auth_user_id" not in client.session


@pytest.mark.usefixtures("clock")
def test_the_lock_is_per_account_and_counts_any_case_of_the_name(make_user):
    make_user("dave"), make_user("erin")
    client = Client()
    for i in range(5):
        _login(client, "DAVE" if i % 2 else "dave", "wrong")
    assert _login(client, "dave", PASSWORD).status_code == 429
    assert _login(client, "erin", PASSWORD).status_code == 302  # another account: fine


@pytest.mark.usefixtures("clock")
def test_the_lock_is_per_address_across_accounts(make_user):
    make_user("dave")
    for i in range(20):
        _login(Client(), f"nobody{i}", "wrong", REMOTE_ADDR="203.0.113.7")
    assert _login(Client(), "dave", PASSWORD, REMOTE_ADDR="203.0.113.7").status_code == 429
    assert _login(Client(), "dave", PASSWORD, REMOTE_ADDR="203.0.113.8").status_code == 302


@pytest.mark.usefixtures("clock")
def test_a_success_resets_no_count(make_user):
    make_user("dave")
    for _ in range(4):
        _login(Client(), "dave", "wrong", REMOTE_ADDR="203.0.113.9")
    assert _login(Client(), "dave", PASSWORD, REMOTE_ADDR="198.51.100.1").status_code == 302
    assert _login(Client(), "dave", "wrong", REMOTE_ADDR="203.0.113.9").status_code == 400
    assert _login(Client(), "dave", PASSWORD, REMOTE_ADDR="198.51.100.1").status_code == 429


@pytest.mark.usefixtures("clock")
def test_the_token_endpoint_shares_the_lock(make_user):
    make_user("dave")
    api = APIClient()
    for i in range(5):
        bad = api.post("/api/auth/token/", {"username": "dave", "password": f"x{i}"}, format="json")
        assert bad.status_code == 400
    locked = api.post("/api/auth/token/", {"username": "dave", "password": PASSWORD}, format="json")
    assert locked.status_code == 429 and locked["Retry-After"] == "900"
    assert locked.json()["code"] == "rate_limited"
    assert "failed logins for this account" in locked.json()["detail"]
    # ... and so does the web form, for the same account.
    assert _login(Client(), "dave", PASSWORD).status_code == 429


def _admin_login(client: Client, username: str, password: str):  # type: ignore[no-untyped-def]
    data = {"username": username, "password": password, "next": "/admin/"}
    return client.post("/admin/login/?next=/admin/", data)


@pytest.mark.usefixtures("clock")
def test_the_admins_login_is_limited_and_says_why(make_user):
    staff = make_user("root")
    staff.is_staff = staff.is_superuser = True
    staff.save()
    client = Client()
    for i in range(5):
        wrong = _admin_login(client, "root", f"wrong{i}")
        assert wrong.status_code == 200 and "correct username and password" in wrong.text
    locked = _admin_login(client, "root", PASSWORD)
    assert locked.status_code == 200 and "_auth_user_id" not in client.session
    assert "Too many failed logins for this account: at most 5 every 15 minutes." in locked.text
    # One count for every way in: the site's form and the token endpoint refuse too.
    assert _login(Client(), "root", PASSWORD).status_code == 429
    credentials = {"username": "root", "password": PASSWORD}
    token = APIClient().post("/api/auth/token/", credentials, format="json")
    assert token.status_code == 429
    # Another staff account from another address is let in.
    other = make_user("admin2")
    other.is_staff = True
    other.save()
    fine = _admin_login(Client(REMOTE_ADDR="198.51.100.2"), "admin2", PASSWORD)
    assert fine.status_code == 302 and fine["Location"] == "/admin/"


@pytest.mark.usefixtures("clock")
def test_each_failed_login_counts_once_whichever_way_it_came(make_user):
    make_user("dave")
    _login(Client(), "dave", "wrong")
    _admin_login(Client(), "dave", "wrong")
    APIClient().post("/api/auth/token/", {"username": "dave", "password": "x"}, format="json")
    counts = [
        int(v) for v in get_connection().mget(get_connection().keys("ratelimit:login_account:*"))
    ]
    assert counts == [3]


@pytest.mark.usefixtures("clock")
def test_the_backend_refuses_a_locked_login_on_any_path_that_authenticates(make_user, rf):
    from django.contrib.auth import authenticate

    make_user("dave")
    request = rf.post("/anywhere/")
    for _ in range(5):
        assert authenticate(request, username="dave", password="wrong") is None
    # Refused with the wait (a ValidationError, which the host's login form shows).
    with pytest.raises(logins.LoginLocked, match="Try again in 15 minutes"):
        authenticate(request, username="dave", password=PASSWORD)
    # Without a request (the shell, Client.login) there is no address to limit by.
    assert authenticate(username="dave", password=PASSWORD) is not None


def test_a_host_without_the_backend_is_warned(settings):
    from articles.operations.checks import check_configuration

    settings.AUTHENTICATION_BACKENDS = ["django.contrib.auth.backends.ModelBackend"]
    assert "articles.W005" in [m.id for m in check_configuration()]
    settings.AUTHENTICATION_BACKENDS = ["articles.store.logins.LoginLimitBackend"]
    assert "articles.W005" not in [m.id for m in check_configuration()]


# --- sign-up names -----------------------------------------------------------------------


def _signup(client: Client, username: str, email: str = ""):  # type: ignore[no-untyped-def]
    data = {"username": username, "email": email, "password1": PASSWORD, "password2": PASSWORD}
    return client.post("/signup/", data)


@pytest.mark.parametrize(
    "lookalike", ["\u0430lice", "ALICE", "a1ice", "moderat\u043er", "rnoderator"]
)
def test_names_confusable_with_an_existing_one_are_refused(client, make_user, lookalike):
    make_user("alice"), make_user("moderator")
    response = _signup(client, lookalike)
    assert response.status_code == 400
    # Another case of the same name is Django's own refusal; the rest are look-alikes.
    said = "already exists" if lookalike == "ALICE" else "looks like another account"
    assert said in response.content.decode()
    assert not get_user_model().objects.filter(username=lookalike).exists()


@pytest.mark.parametrize(
    ("existing", "lookalike"),
    [
        ("moderator", "m0derator"),
        ("bob", "b0b"),
        ("alice", "aIice"),
        ("alice", "al1ce"),
        ("alice", "AL1CE"),
        ("dave", "d4ve"),
        ("al1ce", "alice"),  # whichever came first
        ("bill", "biII"),
    ],
)
def test_names_spelt_with_lookalike_digits_and_letters_are_refused(
    client, make_user, existing, lookalike
):
    make_user(existing)
    response = _signup(client, lookalike)
    assert response.status_code == 400 and "looks like another account" in response.text
    assert not get_user_model().objects.filter(username=lookalike).exists()


@pytest.mark.parametrize(
    ("existing", "other"),
    [
        ("bob", "rob"),
        ("alice", "alicia"),
        ("dave", "dan"),
        ("tim", "tom"),
        ("ann", "anna"),
        ("sam", "sara"),
        ("mike", "mika"),
        ("reader001", "reader002"),
        ("user1", "user2"),
        ("bob", "bob2"),
        ("eve", "evie"),
        ("carl", "carol"),
    ],
)
def test_distinct_ordinary_names_are_not_taken_for_lookalikes(client, make_user, existing, other):
    make_user(existing)
    assert _signup(client, other).status_code == 302


def test_numbered_names_stay_apart():
    numbered = [f"reader{n:03}" for n in range(1000)] + [f"user{n}" for n in range(100)]
    assert len({names.name_key(name) for name in numbered}) == len(numbered)


def test_name_keys_stored_in_the_old_form_are_rekeyed_by_the_migration(make_user):
    """Ensure users keyed before the look-alike table still block their look-alikes: the
    migration computes every stored key again (oldest first keeps a shared key)."""
    from importlib import import_module

    from django.apps import apps

    alice, older = make_user("alice"), make_user("b0b")
    newer = make_user("bob")
    # As the old key function left them: "alice" and "bOb" apart from "bob".
    Profile.objects.filter(user=alice).update(name_key="alice")
    Profile.objects.filter(user=older).update(name_key="bOb")
    Profile.objects.filter(user=newer).update(name_key="bob")
    import_module("articles.migrations.0003_name_keys_again").name_keys_again(apps, None)
    keys_of = dict(Profile.objects.values_list("user__username", "name_key"))
    assert keys_of == {"alice": names.name_key("alice"), "b0b": names.name_key("bob"), "bob": None}
    assert people.name_taken("aIice") and people.name_taken("bob")


@pytest.mark.parametrize(
    "bad", ["bob.smith", "bob smith", "b@b", "ab/c", "é", "x" * 31, "12345", "0"]
)
def test_new_names_keep_to_the_documented_character_set(client, bad):
    response = _signup(client, bad)
    assert response.status_code == 400
    assert not get_user_model().objects.filter(username=bad).exists()


def test_a_name_within_the_set_signs_up_with_an_optional_email(client):
    assert _signup(client, "2024-x", "").status_code == 302  # digits, and more than digits
    assert _signup(Client(), "Zed_9-x", "zed@example.org").status_code == 302
    user = get_user_model().objects.get(username="Zed_9-x")
    assert user.email == "zed@example.org"
    assert Profile.objects.get(user=user).name_key == names.name_key("Zed_9-x")


def test_names_made_before_the_rule_still_log_in(make_user):
    make_user("old.name@x+y")
    assert _login(Client(), "old.name@x+y", PASSWORD).status_code == 302


def test_racing_lookalike_signups_cannot_both_win(make_user):
    """Ensure the database, not the form's check, decides: a strict save of a look-alike
    fails even when the form's check has passed."""
    make_user("alice")
    user = get_user_model()(username="\u0430lice")
    user.strict_name = True
    with pytest.raises(IntegrityError), transaction.atomic():
        user.save()
    assert not get_user_model().objects.filter(username="\u0430lice").exists()


def test_a_lookalike_made_by_an_admin_gets_no_key(make_user):
    make_user("alice")
    other = make_user("\u0430lice")  # createsuperuser, the admin: allowed, keyless
    assert Profile.objects.get(user=other).name_key is None


def test_users_made_in_bulk_get_their_name_keys_unless_held(client, make_user):
    make_user("alice")
    User = get_user_model()
    made = User.objects.bulk_create([User(username=n) for n in ("reader001", "a1ice")])
    people.bulk_profiles(User.objects.filter(username__in=["reader001", "a1ice", "alice"]))
    keys_of = dict(Profile.objects.values_list("user__username", "name_key"))
    assert keys_of["reader001"] == names.name_key("reader001")
    assert keys_of["a1ice"] is None  # alice holds that key, and keeps it
    assert keys_of["alice"] == names.name_key("alice")
    assert len(made) == 2
    response = _signup(client, "reader00l")
    assert response.status_code == 400 and "looks like another account" in response.content.decode()


# --- user pages --------------------------------------------------------------------------


def test_the_id_url_redirects_to_the_name_url(client, make_user):
    ann = make_user("ann")
    response = client.get(f"/u/{ann.pk}/")
    assert response.status_code == 302 and response["Location"] == "/u/ann/"
    assert client.get("/u/99999/").status_code == 404
    assert client.get("/u/nobody/").status_code == 404


def test_a_user_page_shows_karma_about_and_articles(client, make_user):
    ann, bob, cid = make_user("ann"), make_user("bob"), make_user("cid")
    a1, a2 = article(ann, "First"), article(ann, "Second", "https://example.org/b")
    services.article_vote(article_id=a1.id, user_id=bob.pk, direction=Vote.UP)
    services.article_vote(article_id=a2.id, user_id=cid.pk, direction=Vote.DOWN)
    article(bob, "Not hers", "https://example.org/c")
    assert selectors.user_karma(user_id=ann.pk) == 2 + 0  # (1 + 1) + (1 - 1)
    people.account_update(user=ann, email="", about="I like <b>sets</b>.")
    page = client.get("/u/ann/").content.decode()
    assert "<strong>2</strong> karma" in page
    assert "I like &lt;b&gt;sets&lt;/b&gt;." in page
    assert "First" in page and "Second" in page and "Not hers" not in page


def test_karma_reads_in_one_round_trip_whatever_the_number_of_articles(make_user):
    ann = make_user("ann")
    for i in range(30):
        article(ann, f"T{i}", f"https://example.org/{i}")
    conn = get_connection()
    selectors.user_karma(user_id=ann.pk)  # the script is loaded
    calls = lambda: {  # noqa: E731
        name: conn.info("commandstats").get(f"cmdstat_{name}", {}).get("calls", 0)
        for name in ("evalsha", "eval", "zscore", "hgetall")
    }
    before = calls()
    assert selectors.user_karma(user_id=ann.pk) == 30
    after = calls()
    # One script call from the client, which reads the kept figure: no ZSCORE per article.
    assert after["evalsha"] - before["evalsha"] == 1 and after["eval"] == before["eval"]
    assert after["zscore"] - before["zscore"] == 0


def test_a_user_without_a_profile_row_has_an_empty_about(client, make_user):
    ann = make_user("ann")
    Profile.objects.filter(user=ann).delete()
    assert people.profile_of(ann).about == ""
    assert client.get("/u/ann/").status_code == 200


def test_a_name_made_before_the_rule_has_a_working_page(client, make_user):
    make_user("old.name@x+y")
    assert client.get("/u/old.name@x+y/").status_code == 200


def test_an_old_name_of_digits_alone_has_its_page_at_its_number(client, make_user):
    """/u/<digits>/ is an account number: such a user's page is served there, and every
    link to it (the header's own name among them) goes there."""
    first = make_user("first")
    digits = make_user(str(first.pk))  # a name that is another account's number
    page = client.get(f"/u/{digits.pk}/")
    assert page.status_code == 200
    assert f'<span class="muted">user</span> {digits.username}</h1>' in page.text
    assert client.get(f"/u/{first.pk}/").status_code == 302  # the other account, as ever
    client.force_login(digits)
    assert f'class="me" href="/u/{digits.pk}/"' in client.get("/new/").text


# --- account settings, e-mail, password reset ---------------------------------------------


def test_the_account_page_changes_email_and_about(client, make_user):
    ann = make_user("ann")
    client.force_login(ann)
    assert client.get("/accounts/settings/").status_code == 200
    response = client.post(
        "/accounts/settings/", {"email": "ann@example.org", "about": "Hi there."}
    )
    assert response.status_code == 302
    ann.refresh_from_db()
    assert ann.email == "ann@example.org" and people.profile_of(ann).about == "Hi there."
    bad = client.post("/accounts/settings/", {"email": "not-an-address", "about": ""})
    assert bad.status_code == 400
    ann.refresh_from_db()
    assert ann.email == "ann@example.org"


def test_a_password_reset_by_email_sets_a_new_password(client, make_user, settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    ann = make_user("ann")
    ann.email = "ann@example.org"
    ann.save()
    response = client.post("/accounts/password/reset/", {"email": "ANN@example.org"})
    assert response.status_code == 302
    assert response["Location"] == "/accounts/password/reset/sent/"
    (message,) = mail.outbox
    assert message.to == ["ann@example.org"] and "reset your password" in message.subject
    link = re.search(r"https?://[^/\s]+(/\S+)", message.body).group(1)  # type: ignore[union-attr]
    form = client.get(link, follow=True)
    assert "Choose a new password" in form.content.decode()
    done = client.post(
        form.redirect_chain[-1][0],
        {"new_password1": "A-new-pass-456", "new_password2": "A-new-pass-456"},
    )
    assert done.status_code == 302
    assert _login(Client(), "ann", "A-new-pass-456").status_code == 302
    # The link works once.
    assert "This link does not work" in client.get(link, follow=True).content.decode()


def test_a_reset_for_an_unknown_address_looks_the_same_and_sends_nothing(client, settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    response = client.post("/accounts/password/reset/", {"email": "who@example.org"})
    assert response.status_code == 302 and mail.outbox == []


@pytest.mark.usefixtures("clock")
def test_reset_emails_are_limited_per_address(client, settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    settings.ARTICLES_RATE_LIMITS = {"password_reset": (2, 3600)}
    for _ in range(2):
        assert (
            client.post("/accounts/password/reset/", {"email": "a@example.org"}).status_code == 302
        )
    refused = client.post("/accounts/password/reset/", {"email": "a@example.org"})
    assert refused.status_code == 429 and refused["Retry-After"] == "3600"
    assert "Too many password reset e-mails" in refused.content.decode()


def test_login_with_redis_down_is_a_503_not_a_500(make_user, redis_server, settings):
    make_user("dave")
    settings.ARTICLES_REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens there
    settings.ARTICLES_REDIS_ALIAS = None
    response = _login(Client(), "dave", PASSWORD)
    assert response.status_code == 503


# --- deleting an account -----------------------------------------------------------------


def test_deleting_an_account_needs_its_password(client, make_user):
    dave = make_user("dave")
    client.force_login(dave)
    response = client.post("/accounts/delete/", {"password": "wrong"})
    assert response.status_code == 400 and "That is not your password." in response.content.decode()
    assert get_user_model().objects.filter(pk=dave.pk).exists()


def test_a_new_account_taking_a_deleted_name_is_not_shown_as_its_poster(client, make_user):
    dave = make_user("dave")
    a = article(dave, "Dave's post")
    client.force_login(dave)
    assert client.post("/accounts/delete/", {"password": PASSWORD}).status_code == 302
    assert not get_user_model().objects.filter(username="dave").exists()
    assert selectors.article_get(article_id=a.id).poster_name == DELETED_NAME
    new_dave = Client()
    assert _signup(new_dave, "dave").status_code == 302
    listing = Client().get("/new/").content.decode()
    assert "by [deleted]" in re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", listing))
    assert ">dave<" not in listing
    assert "Dave's post" not in Client().get("/u/dave/").content.decode()
    api = APIClient()
    assert api.get(f"/api/articles/{a.id}/").json()["poster"] == DELETED_NAME
    assert api.get("/api/users/dave/articles/").json()["results"] == []


def test_a_deletion_by_any_route_forgets_the_name(make_user):
    dave = make_user("dave")
    a = article(dave)
    get_user_model().objects.filter(pk=dave.pk).delete()  # the admin, the shell
    assert selectors.article_get(article_id=a.id).poster_name == DELETED_NAME


def test_a_deletion_with_redis_down_keeps_the_account(make_user, redis_server):
    dave = make_user("dave")
    redis_server.client().execute_command("CLIENT", "PAUSE", "1500", "WRITE")
    with pytest.raises(redis.RedisError):  # the store's timeout (TimeoutError here)
        people.account_delete(user=dave)
    assert get_user_model().objects.filter(pk=dave.pk).exists()


def test_forget_renames_only_the_users_own_items(make_user, conn):
    dave, erin = make_user("dave"), make_user("erin")
    mine, theirs = article(dave, "Mine"), article(erin, "Theirs", "https://example.org/t")
    conn.zadd(keys.submitted(dave.pk), {keys.article(theirs.id): 1})  # a stray member
    assert services.user_forget(user_id=dave.pk) == 1
    assert selectors.article_get(article_id=mine.id).poster_name == DELETED_NAME
    assert selectors.article_get(article_id=theirs.id).poster_name == "erin"


# --- the table --------------------------------------------------------------------------


def test_the_migrations_match_the_model():
    from django.core.management import call_command

    call_command("makemigrations", "articles", "--check", "--dry-run", verbosity=0)


def test_the_migration_keys_existing_users_oldest_first():
    """Ensure users made before the table get a profile; of two look-alikes, the older
    keeps the key and the newer gets none (both keep logging in)."""
    from importlib import import_module

    from django.apps import apps

    User = get_user_model()
    User.objects.bulk_create([User(username="alice"), User(username="\u0430lice")])  # no signals
    older, newer = User.objects.order_by("pk")
    Profile.objects.all().delete()
    import_module("articles.migrations.0001_profile").keys_of_existing_users(apps, None)
    assert Profile.objects.get(user=older).name_key == names.name_key("alice")
    assert Profile.objects.get(user=newer).name_key is None


def test_a_deleted_accounts_comments_show_as_deleted(make_user):
    dave, erin = make_user("dave"), make_user("erin")
    a = article(erin, "Erin's post")
    kept = services.comment_post(article_id=a.id, user_id=dave.pk, author_name="dave", text="Hi")
    reply = services.comment_post(
        article_id=a.id, user_id=erin.pk, author_name="erin", text="Hello", parent_id=kept.id
    )
    get_user_model().objects.filter(pk=dave.pk).delete()
    assert selectors.comment_get(comment_id=kept.id).author_name == DELETED_NAME
    assert selectors.comment_get(comment_id=reply.id).author_name == "erin"
    thread = selectors.comment_thread(article_id=a.id)
    assert [c.author_name for c in thread.items] == [DELETED_NAME, "erin"]
