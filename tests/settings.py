"""Settings of the test suite: votesite's own, plus what a run's environment lacks. The
project refuses to start in production without DJANGO_SECRET_KEY, so the suite names a
key of its own here (kept in the environment, so the processes it starts have it too)."""

import os

os.environ.setdefault("DJANGO_SECRET_KEY", "tests-only-secret-key-not-for-any-site-0123456789")

from votesite.settings import *  # noqa: F403

# Nothing is collected for the tests: whitenoise serves the finders' files (as under
# `make run`) and needs no STATIC_ROOT, which it would warn about while it is missing.
STATIC_ROOT = None  # type: ignore[assignment]
