"""The settings: Redis URLs for the cache database, environment parsing, the secret key,
and nothing written to disk by reading them."""

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import redis
from django.core.exceptions import ImproperlyConfigured

from votesite.settings import env_bool, with_db


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("unix:///var/run/redis.sock?db=0", "unix:///var/run/redis.sock?db=1"),
        ("unix:///var/run/redis.sock", "unix:///var/run/redis.sock?db=1"),
        ("redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/1"),
        ("redis://:secret@host:6380", "redis://:secret@host:6380/1"),
    ],
)
def test_the_cache_database_is_the_same_server_one_database_up(url, expected):
    assert with_db(url, 1) == expected


def test_the_embedded_cache_url_is_one_redis_py_accepts(redis_server):
    client = redis.Redis.from_url(with_db(f"{redis_server.url}?db=0", 1))
    assert client.ping()
    assert client.connection_pool.connection_kwargs["db"] == 1


def test_env_bool_refuses_what_it_cannot_read(monkeypatch):
    monkeypatch.setenv("X_FLAG", "maybe")
    with pytest.raises(ImproperlyConfigured):
        env_bool("X_FLAG")
    monkeypatch.setenv("X_FLAG", "Yes")
    assert env_bool("X_FLAG") is True


def _import_settings(var_dir: Path, code: str, **env: str) -> subprocess.CompletedProcess[str]:
    """votesite.settings read in a fresh process with exactly `env` (and VOTESITE_VAR_DIR)
    of the DJANGO_* variables."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")}
    environ.update(VOTESITE_VAR_DIR=str(var_dir), DJANGO_SETTINGS_MODULE="votesite.settings", **env)
    return subprocess.run(
        [sys.executable, "-c", f"from django.conf import settings as s; print({code})"],
        env=environ,
        capture_output=True,
        text=True,
        check=False,
    )


def _settings_in_subprocess(tmp_path: Path, code: str, **env: str) -> str:
    run = _import_settings(tmp_path, code, DJANGO_SECRET_KEY=KEY, **env)
    assert run.returncode == 0, run.stderr
    return run.stdout.strip()


KEY = "test-only-secret-key-that-is-long-enough-0123456789abcdefghij"


def test_importing_settings_writes_nothing_to_disk(tmp_path):
    """Ensure reading the settings (any manage.py command, a worker's start) creates no
    file or folder: no secret key file, no static folder."""
    var = tmp_path / "var"
    for env in ({"DJANGO_DEBUG": "true"}, {"DJANGO_SECRET_KEY": KEY}):
        run = _import_settings(var, "s.SECRET_KEY[:8], s.STATIC_ROOT", **env)
        assert run.returncode == 0, run.stderr
        assert not var.exists(), sorted(var.rglob("*"))


def test_production_without_a_secret_key_refuses_to_start_and_says_why(tmp_path):
    run = _import_settings(tmp_path, "s.SECRET_KEY")
    assert run.returncode != 0
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith("django.core.exceptions.ImproperlyConfigured: DJANGO_SECRET_KEY")
    assert "DJANGO_DEBUG" in last  # the way out for development is named too
    empty = _import_settings(tmp_path, "s.SECRET_KEY", DJANGO_SECRET_KEY="", DJANGO_DEBUG="no")
    assert empty.returncode != 0 and "ImproperlyConfigured" in empty.stderr


def test_development_uses_a_fixed_key_that_deploy_checks_call_insecure(tmp_path):
    runs = [_import_settings(tmp_path, "s.SECRET_KEY", DJANGO_DEBUG="true") for _ in range(2)]
    assert all(run.returncode == 0 for run in runs), runs[0].stderr
    first = runs[0].stdout.strip()
    assert runs[1].stdout.strip() == first
    # check --deploy (security.W009) flags keys with this prefix, should one reach production.
    assert first.startswith("django-insecure-")


def test_hsts_include_subdomains_and_preload_are_each_their_own_choice_off_by_default(tmp_path):
    code = "s.SECURE_HSTS_SECONDS, s.SECURE_HSTS_INCLUDE_SUBDOMAINS, s.SECURE_HSTS_PRELOAD"
    hsts = {"DJANGO_SECURE_HSTS_SECONDS": "31536000"}
    assert _settings_in_subprocess(tmp_path, code, **hsts) == "31536000 False False"
    both = {"DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS": "true", "DJANGO_SECURE_HSTS_PRELOAD": "yes"}
    assert _settings_in_subprocess(tmp_path, code, **hsts, **both) == "31536000 True True"
    only = {"DJANGO_SECURE_HSTS_PRELOAD": "true"}
    assert _settings_in_subprocess(tmp_path, code, **hsts, **only) == "31536000 False True"


def test_every_environment_variable_the_settings_read_is_in_the_configuration_table():
    import re

    base = Path(__file__).resolve().parents[2]
    source = (base / "votesite" / "settings.py").read_text()
    read = set(re.findall(r'(?:env_\w+|os\.environ\.get)\(\s*"([A-Z0-9_]+)"', source))
    read.add("DATABASE_URL")  # dj_database_url.config() reads it
    page = (base / "docs" / "install.md").read_text()
    table = page[page.index("## Configuration") :]
    table = table[: table.index("\n\n", table.index("| variable |"))]
    missing = sorted(name for name in read if f"`{name}`" not in table)
    assert len(read) > 20 and not missing, missing


def test_the_default_sqlite_file_is_readable_by_its_owner_only(tmp_path, redis_server):
    """Ensure `migrate` in a fresh VOTESITE_VAR_DIR leaves a 0600 database file, whatever
    the umask: it holds password hashes, sessions and token digests."""
    var = tmp_path / "var"
    var.mkdir()
    environ = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")}
    environ.pop("DATABASE_URL", None)
    environ.update(
        VOTESITE_VAR_DIR=str(var),
        DJANGO_SETTINGS_MODULE="votesite.settings",
        DJANGO_DEBUG="true",
        REDIS_URL=f"{redis_server.url}?db=0",
    )
    run = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
        cwd=Path(__file__).resolve().parents[2],
        env=environ,
        capture_output=True,
        text=True,
        check=False,
        umask=0o022,
    )
    assert run.returncode == 0, run.stderr
    assert stat.S_IMODE((var / "db.sqlite3").stat().st_mode) == 0o600


def _manage_check(var_dir: Path, redis_url: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "EMAIL_"))}
    environ.update(
        VOTESITE_VAR_DIR=str(var_dir),
        DJANGO_SETTINGS_MODULE="votesite.settings",
        DJANGO_SECRET_KEY=KEY,
        REDIS_URL=redis_url,
        **env,
    )
    return subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=Path(__file__).resolve().parents[2],
        env=environ,
        capture_output=True,
        text=True,
        check=False,
    )


def test_production_without_an_smtp_server_prints_no_mail_and_fails_its_checks(
    tmp_path, redis_server
):
    """Ensure a reset link never lands in the log outside DEBUG: with no EMAIL_HOST no mail
    is sent, and `check` (so migrate, the image's start, check --deploy) refuses until
    EMAIL_HOST names a server or EMAIL_DISABLED=true says no mail is meant."""
    backend = _settings_in_subprocess(tmp_path, "s.EMAIL_BACKEND")
    assert backend == "django.core.mail.backends.dummy.EmailBackend"
    url = f"{redis_server.url}?db=0"
    refused = _manage_check(tmp_path, url)
    assert refused.returncode != 0 and "votesite.E001" in refused.stderr
    assert "EMAIL_DISABLED" in refused.stderr  # the way out is named
    for ok in ({"EMAIL_HOST": "smtp.example.org"}, {"EMAIL_DISABLED": "true"}):
        run = _manage_check(tmp_path, url, **ok)
        assert run.returncode == 0 and "votesite.E001" not in run.stderr, run.stderr
    development = _import_settings(tmp_path, "s.EMAIL_BACKEND", DJANGO_DEBUG="true")
    assert development.stdout.strip() == "django.core.mail.backends.console.EmailBackend"


def test_the_mail_check_refuses_a_console_backend_outside_debug(settings):
    from votesite.checks import mail_is_delivered

    settings.DEBUG = False
    settings.EMAIL_BACKEND = "django.core.mail.backends.console.EmailBackend"
    settings.EMAIL_HOST = "smtp.example.org"
    (error,) = mail_is_delivered()
    assert error.id == "votesite.E001" and "printed to the log" in error.msg
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    assert mail_is_delivered() == []


@pytest.mark.django_db
def test_a_site_that_sends_no_mail_says_reset_is_unavailable_and_sends_nothing(
    client, make_user, settings
):
    from django.core import mail

    settings.EMAIL_BACKEND = "django.core.mail.backends.dummy.EmailBackend"
    ann = make_user("ann")
    ann.email = "ann@example.org"
    ann.save()
    page = client.get("/accounts/password/reset/")
    assert page.status_code == 200 and "Password reset is not available" in page.content.decode()
    sent = client.post("/accounts/password/reset/", {"email": "ann@example.org"})
    assert sent.status_code == 200 and "not available" in sent.content.decode()
    assert mail.outbox == []
