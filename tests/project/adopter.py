"""An adopter's project, for the tests that install the app as another project would: the
app built as a wheel (once a session), installed apart from this checkout into a fresh
`django-admin startproject`, on a Redis of its own, served by runserver on a free port.

`adopter_project(wheel, users=...)` makes one; what the host adds is an argument: the kind
of user model ("default", "abstractuser", "email"), settings and URL text appended to the
host's own, and more files (path -> text) written into the project."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from articles.operations.embedded import EmbeddedRedis

CHECKOUT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent

SETTINGS = """
INSTALLED_APPS += ["rest_framework", "rest_framework.authtoken", "articles"]
ARTICLES_REDIS_URL = {url!r}
AUTHENTICATION_BACKENDS = [
    "articles.store.logins.LoginLimitBackend",
    "django.contrib.auth.backends.ModelBackend",
]
"""

URLS = """
from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("news/", include("articles.urls")),
    path("news-api/", include("articles.api.urls")),
]
"""

# The user models an adopter's project may have: each is an app `people` (files written
# into the project) and the settings naming it. "default" is Django's own auth.User.
_ABSTRACT_USER = '''
from django.contrib.auth.models import AbstractUser
from django.db import models


class Person(AbstractUser):
    """Django's user with one field more, as most projects start theirs."""

    favourite_colour = models.CharField(max_length=40, blank=True)
'''

_EMAIL_USER = '''
from django.contrib.auth.base_user import AbstractBaseUser, BaseUserManager
from django.contrib.auth.models import PermissionsMixin
from django.db import models


class PersonManager(BaseUserManager):
    use_in_migrations = True

    def create_user(self, email, password=None, **extra):
        user = self.model(email=self.normalize_email(email), **extra)
        user.set_password(password)
        user.save(using=self._db)
        return user

    def create_superuser(self, email, password=None, **extra):
        extra.setdefault("is_staff", True)
        extra.setdefault("is_superuser", True)
        return self.create_user(email, password, **extra)


class Person(AbstractBaseUser, PermissionsMixin):
    """Logs in with an e-mail address: no username, no names, no date_joined."""

    email = models.EmailField(unique=True)
    is_staff = models.BooleanField(default=False)
    is_active = models.BooleanField(default=True)

    USERNAME_FIELD = "email"
    EMAIL_FIELD = "email"
    REQUIRED_FIELDS: list[str] = []

    objects = PersonManager()
'''

USER_MODELS: dict[str, dict[str, str]] = {
    "default": {},
    "abstractuser": {"people/__init__.py": "", "people/models.py": _ABSTRACT_USER},
    "email": {"people/__init__.py": "", "people/models.py": _EMAIL_USER},
}
_PEOPLE_SETTINGS = '\nINSTALLED_APPS += ["people"]\nAUTH_USER_MODEL = "people.Person"\n'


def build_wheel(out: Path) -> Path:
    """The app's wheel, built in `out` from a copy of the files git tracks: setuptools
    writes build/ and *.egg-info into the source tree it builds, which must not be this
    checkout."""
    source = out / "source"
    tracked = (
        subprocess.run(["git", "ls-files", "-z"], cwd=CHECKOUT, capture_output=True, check=True)
        .stdout.decode()
        .split("\0")
    )
    for name in filter(None, tracked):
        if (CHECKOUT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(CHECKOUT / name, source / name)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(source)],
        check=True,
        cwd=out,
    )
    (built,) = out.glob("*.whl")
    return built


@pytest.fixture(scope="session")
def wheel() -> Iterator[Path]:
    """One wheel for the session (tests/project/conftest.py shares this fixture)."""
    out = Path(tempfile.mkdtemp(prefix="vs-wheel-"))
    yield build_wheel(out)
    shutil.rmtree(out, ignore_errors=True)


@dataclass
class Host:
    """A running adopter's project: its address, its folders and its Redis."""

    base: str
    project: Path
    site: Path
    redis: EmbeddedRedis
    env: dict[str, str]
    users: str

    def manage(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=self.project,
            env=self.env,
            capture_output=True,
            text=True,
            check=check,
        )

    def create_user(self, login: str, password: str) -> None:
        """An account made by the host's own user manager (as createsuperuser would)."""
        code = (
            "from django.contrib.auth import get_user_model; U = get_user_model(); "
            f"U.objects.create_user(**{{U.USERNAME_FIELD: {login!r}}}, password={password!r})"
        )
        self.manage("shell", "-c", code)


@contextlib.contextmanager
def adopter_project(
    wheel: Path,
    *,
    users: str = "default",
    settings: str = "",
    urls: str = "",
    files: Mapping[str, str] | None = None,
) -> Iterator[Host]:
    """A fresh startproject with the wheel installed beside it (not this checkout), with
    the user model `users` names (USER_MODELS), `settings` and `urls` text appended to the
    host's, and `files` written into the project; migrated and served."""
    root = Path(tempfile.mkdtemp(prefix="vs-host-", dir="/tmp"))
    site = root / "site-packages"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", site, wheel],
        check=True,
    )
    redis = EmbeddedRedis(root / "redis", daemonize=False)
    redis.start()
    server: subprocess.Popen[str] | None = None
    try:
        env = {
            k: v for k, v in os.environ.items() if k not in ("DJANGO_SETTINGS_MODULE", "REDIS_URL")
        }
        project = root / "project"
        project.mkdir()
        subprocess.run([BIN / "django-admin", "startproject", "host", project], env=env, check=True)
        for path, text in {**USER_MODELS[users], **(files or {})}.items():
            (project / path).parent.mkdir(parents=True, exist_ok=True)
            (project / path).write_text(text)
        host_settings = project / "host" / "settings.py"
        extra = SETTINGS.format(url=f"{redis.url}?db=0")
        extra += _PEOPLE_SETTINGS if USER_MODELS[users] else ""
        host_settings.write_text(host_settings.read_text() + extra + settings)
        (project / "host" / "urls.py").write_text(URLS + urls)
        env = {**env, "PYTHONPATH": str(site), "DJANGO_SETTINGS_MODULE": "host.settings"}
        host = Host("", project, site, redis, env, users)
        if USER_MODELS[users]:
            host.manage("makemigrations", "people")
        host.manage("migrate", "--noinput")
        port = _free_port()
        server = subprocess.Popen(
            [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
            cwd=project,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        host.base = f"http://127.0.0.1:{port}"
        _wait_for(host.base)
        yield host
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=10)
        redis.stop()
        shutil.rmtree(root, ignore_errors=True)


def csrf_token(html: str) -> str:
    """The CSRF token of the first form on a page, as a browser would send it."""
    found = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html)
    assert found, html[:500]
    return found.group(1)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for(base: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(base + "/static/articles/js/vote.js", timeout=1)  # noqa: S310
            return
        except (urllib.error.URLError, ConnectionError):
            time.sleep(0.1)
    raise RuntimeError("the host project's runserver did not answer")


def get(url: str) -> tuple[int, dict[str, str], bytes]:
    return request("GET", url)


def request(
    method: str, url: str, data: dict[str, Any] | None = None, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    """One JSON request with urllib (no session): status, headers and body, errors too."""
    body = json.dumps(data).encode() if data is not None else None
    sent = urllib.request.Request(url, data=body, method=method)  # noqa: S310
    if body is not None:
        sent.add_header("Content-Type", "application/json")
    for name, value in (headers or {}).items():
        sent.add_header(name, value)
    try:
        with urllib.request.urlopen(sent, timeout=10) as response:  # noqa: S310
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()
