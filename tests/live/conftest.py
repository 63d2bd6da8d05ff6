"""The live tests serve the site over ASGI for real (tests/livesite.py)."""

from tests.livesite import asgi_site  # noqa: F401 (a fixture)
