"""The pages in the visitor's language (LocaleMiddleware, Accept-Language), and the app's
German catalogue: complete, compiled, and up to date with the sources."""

from __future__ import annotations

import ast
import gettext
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.core import mail
from django.test import Client

from articles.store import services
from articles.types import Vote
from tests.factories import article, comment, group
from tests.web.forms import login

ROOT = Path(__file__).resolve().parents[2]
LOCALE = ROOT / "articles" / "locale"
PO = LOCALE / "de" / "LC_MESSAGES" / "django.po"
MO = LOCALE / "de" / "LC_MESSAGES" / "django.mo"
GERMAN = {"HTTP_ACCEPT_LANGUAGE": "de-DE,de;q=0.9,en;q=0.5"}
ENGLISH = {"HTTP_ACCEPT_LANGUAGE": "en"}


def page(client: Client, url: str, **headers: str) -> str:
    response = client.get(url, **headers)  # type: ignore[arg-type]
    assert response.status_code == 200, url
    return response.content.decode()


def absent(text: str, *english: str) -> None:
    for words in english:
        assert words not in text, words


# --- The pages --------------------------------------------------------------------------


def test_the_front_page_follows_accept_language(client, make_user):
    article(make_user("ann"), title="Hallo Welt")
    german = page(Client(), "/", **GERMAN)
    assert '<html lang="de">' in german
    for words in ("Startseite", "Gerade im Kommen", "Anmelden", "Registrieren", "Einreichen"):
        assert words in german, words
    absent(german, "Front page", "Rising now", ">Log in<", ">Sign up<", ">Submit<", "Home<")
    english = page(Client(), "/", **ENGLISH)
    assert '<html lang="en">' in english
    assert "Front page" in english and "Rising now" in english and "Startseite" not in english


def test_an_article_page_in_german_with_localised_times_and_plurals(client, make_user):
    ann, bob = make_user("ann"), make_user("bob")
    a = article(ann, title="Ein Artikel", now=time.time() - 180)
    services.article_vote(article_id=a.id, user_id=bob.pk, direction=Vote.UP)
    comment(bob, a.id, text="Erster!")
    text = page(Client(), f"/a/{a.id}/", **GERMAN)
    for words in ("2 Punkte", "1 Kommentar", "vor 3\xa0Minuten", "Abstimmung noch 6\xa0Tage"):
        assert words in text, words
    assert ">Punkte</span>" in text and "Zum Kommentieren anmelden" in text
    absent(text, " points", "minutes ago", "voting closes in", "Log in to comment", ">Reply<")
    # Machine-readable values stay as they are.
    assert re.search(r'<time datetime="\d{4}-\d\d-\d\dT', text)


def test_the_login_and_signup_pages_in_german(client):
    login_page = page(client, "/accounts/login/", **GERMAN)
    assert "<h1>Anmelden</h1>" in login_page and "Noch kein Konto?" in login_page
    assert "Passwort vergessen?" in login_page
    absent(login_page, "<h1>Log in</h1>", "No account yet?", "Forgot your password?")
    signup = page(client, "/signup/", **GERMAN)
    assert "<h1>Registrieren</h1>" in signup and "Konto anlegen" in signup
    absent(signup, "<h1>Sign up</h1>", "Create account", "Have an account?")


def test_a_staff_page_in_german(client, make_user):
    ann = make_user("ann")
    ann.is_staff = True
    ann.save()
    group("redis", "All about Redis")
    login(client, ann)
    text = page(client, "/staff/groups/", **GERMAN)
    assert '<html lang="de"' in text
    for words in ("Neue Gruppe", "Gruppe anlegen", "Beschreiben oder löschen", "Übersicht"):
        assert words in text, words
    absent(text, "New group", "Create group", "Describe or delete", ">Dashboard<")
    dashboard = page(client, "/staff/", **GERMAN)
    assert "Die letzten 30 Tage (UTC)" in dashboard and "Stimmen abgegeben" in dashboard


def test_the_member_since_date_and_karma_in_german(client, make_user):
    ann = make_user("ann")
    ann.date_joined = ann.date_joined.replace(year=2024, month=3, day=5)
    ann.save()
    text = page(Client(), "/u/ann/", **GERMAN)
    assert "Mitglied seit 5. März 2024" in text and "Karma" in text
    assert "member since 5 March 2024" in page(Client(), "/u/ann/", **ENGLISH)


def test_a_feed_in_german(client, make_user):
    article(make_user("ann"))
    feed = page(Client(), "/feeds/new/", **GERMAN)
    assert "<title>votesite: neue Artikel</title>" in feed and 'xml:lang="de"' in feed
    assert "Punkt (1 dafür, 0 dagegen), veröffentlicht von ann." in feed
    english = page(Client(), "/feeds/new/", **ENGLISH)
    assert "<title>votesite: new articles</title>" in english
    assert "1 point (1 up, 0 down), posted by ann." in english


def test_the_password_reset_mail_in_the_askers_language(client, make_user, settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    ann = make_user("ann")
    ann.email = "ann@example.org"
    ann.save()
    response = client.post("/accounts/password/reset/", {"email": "ann@example.org"}, **GERMAN)
    assert response.status_code == 302
    (message,) = mail.outbox
    assert message.subject == "votesite: Passwort zurücksetzen"
    assert message.body.startswith("Hallo ann,\n\njemand (hoffentlich Sie)")


def test_a_kept_page_is_served_only_in_its_own_language(client, make_user, settings):
    """The anonymous page cache, the kept rows and the kept feeds are keyed by language."""
    settings.ARTICLES_ANONYMOUS_PAGE_SECONDS = 60
    article(make_user("ann"))
    assert "Neue Artikel" in page(Client(), "/new/", **GERMAN)
    english = page(Client(), "/new/", **ENGLISH)
    assert "New articles" in english and "Neue Artikel" not in english
    assert ">point</span>" in english and "Punkt" not in english
    assert "votesite: new articles" in page(Client(), "/feeds/new/", **ENGLISH)
    assert "votesite: neue Artikel" in page(Client(), "/feeds/new/", **GERMAN)


def test_the_vote_script_gets_the_words_its_language_changes(client, make_user):
    article(make_user("ann"))
    english = page(Client(), "/new/", **ENGLISH)
    assert 'vote.js" defer></script>' in english  # its own English words serve
    german = page(Client(), "/new/", **GERMAN)
    assert 'data-voted-up="Sie haben dafür gestimmt"' in german
    assert 'data-counts="{up} dafür, {down} dagegen"' in german


# --- The catalogue ----------------------------------------------------------------------


def _entries(path: Path) -> list[dict[str, str]]:
    """The entries of a .po file: msgctxt, msgid, msgid_plural, msgstr[n] and flags."""
    entries: list[dict[str, str]] = []
    for block in path.read_text(encoding="utf-8").split("\n\n"):
        entry: dict[str, str] = {}
        key = ""
        for line in block.splitlines():
            if line.startswith("#,"):
                entry["flags"] = line[2:].strip()
            elif line.startswith("#"):
                continue
            elif line.startswith('"'):
                entry[key] += ast.literal_eval(line)
            else:
                key, _, value = line.partition(" ")
                entry[key] = ast.literal_eval(value)
        if "msgid" in entry:
            entries.append(entry)
    return entries


def _key(entry: dict[str, str]) -> tuple[str | None, str, str | None]:
    return entry.get("msgctxt"), entry["msgid"], entry.get("msgid_plural")


def test_the_german_catalogue_is_complete_and_not_fuzzy():
    entries = _entries(PO)
    header, messages = entries[0], entries[1:]
    assert header["msgid"] == "" and "Language: de\n" in header["msgstr"]
    assert "Plural-Forms: nplurals=2; plural=(n != 1);" in header["msgstr"]
    fields = header["msgstr"].splitlines()
    assert all(re.fullmatch(r"[\w-]+: [^\\]*", f) for f in fields), fields
    assert len(messages) > 300
    for entry in entries:
        assert "fuzzy" not in entry.get("flags", ""), _key(entry)
    for entry in messages:
        forms = [v for k, v in entry.items() if k.startswith("msgstr")]
        assert forms and all(forms), _key(entry)
        # The same named values, so no translation drops or invents one.
        names = set(re.findall(r"%\((\w+)\)", entry["msgid"]))
        for form in forms:
            assert set(re.findall(r"%\((\w+)\)", form)) <= names | {"num", "count"}, _key(entry)


def test_the_compiled_catalogue_matches_the_po_file():
    with MO.open("rb") as compiled:
        catalog = gettext.GNUTranslations(compiled)._catalog  # type: ignore[attr-defined]
    expected: dict[object, str] = {}
    for entry in _entries(PO)[1:]:
        msgid = entry["msgid"]
        if "msgctxt" in entry:
            msgid = f"{entry['msgctxt']}\x04{msgid}"
        if "msgid_plural" in entry:
            expected.update({(msgid, 0): entry["msgstr[0]"], (msgid, 1): entry["msgstr[1]"]})
        else:
            expected[msgid] = entry["msgstr"]
    assert {k: v for k, v in catalog.items() if k != ""} == expected


@pytest.mark.skipif(not shutil.which("xgettext"), reason="needs GNU gettext (xgettext, msgmerge)")
def test_the_catalogue_holds_every_marked_string_and_no_other(tmp_path):
    """What `make messages` would extract now is what the committed catalogue has."""
    copy = tmp_path / "src"
    shutil.copytree(ROOT / "articles", copy / "articles", ignore=shutil.ignore_patterns("static"))
    shutil.copytree(ROOT / "tools", copy / "tools")
    subprocess.run(
        [sys.executable, str(copy / "tools" / "messages.py"), "-l", "de"],
        check=True,
        capture_output=True,
        cwd=copy,
    )
    fresh = {_key(e) for e in _entries(copy / "articles" / PO.relative_to(ROOT / "articles"))}
    committed = {_key(e) for e in _entries(PO)}
    assert sorted(fresh - committed, key=str) == [], "marked but not in the catalogue"
    assert sorted(committed - fresh, key=str) == [], "in the catalogue but no longer marked"
