"""Runtime and development dependencies apart, each pinned to what the tests ran with."""

from __future__ import annotations

import re
from importlib.metadata import version
from pathlib import Path

BASE = Path(__file__).resolve().parents[2]
TOOLS = {
    "pytest", "pytest-django", "pytest-xdist", "hypothesis", "schemathesis", "playwright",
    "ruff", "mypy", "django-stubs", "djangorestframework-stubs", "openapi-python-client",
    "axe-playwright-python",
}  # fmt: skip


def _pins(name: str) -> dict[str, str]:
    pins = {}
    for line in (BASE / name).read_text().splitlines():
        line = line.split("#")[0].strip()
        if not line or line.startswith("-r "):
            continue
        match = re.fullmatch(r"([A-Za-z0-9_.-]+)(\[[a-z,]+\])?==([0-9][0-9A-Za-z.]*)", line)
        assert match, f"{name}: not pinned with ==: {line!r}"
        pins[match[1].lower()] = match[3]
    return pins


def test_the_runtime_set_is_pinned_and_holds_no_test_tool():
    runtime = _pins("requirements.txt")
    assert {"django", "gunicorn", "whitenoise", "redis", "django-redis"} <= set(runtime)
    assert not TOOLS & set(runtime)


def test_the_development_set_is_the_runtime_set_plus_the_tools_pinned():
    lines = (BASE / "requirements-dev.txt").read_text().splitlines()
    assert "-r requirements.txt" in lines
    assert set(_pins("requirements-dev.txt")) == TOOLS


def test_every_pin_is_the_version_installed_here():
    pins = {**_pins("requirements.txt"), **_pins("requirements-dev.txt")}
    wrong = {name: (pin, version(name)) for name, pin in pins.items() if version(name) != pin}
    assert not wrong, wrong


def test_the_lock_holds_every_runtime_pin_with_its_hashes_and_nothing_more():
    """Ensure requirements.lock (what make install and the image install, --require-hashes)
    was made from the current requirements.txt: same packages, same versions, each hashed."""
    text = (BASE / "requirements.lock").read_text()
    locked = {}
    for block in re.split(r"\n(?=[A-Za-z])", text):
        match = re.match(r"([A-Za-z0-9_.-]+)==(\S+) \\\n", block)
        if match:
            locked[match[1].lower().replace("_", "-")] = match[2]
            assert "--hash=sha256:" in block, match[1]
    runtime = {name.replace("_", "-"): pin for name, pin in _pins("requirements.txt").items()}
    assert {name: locked.get(name) for name in runtime} == runtime
    # and nothing pip-tools adds besides (no package of the runtime set needs setuptools)
    assert set(locked) - set(runtime) == set()
