"""The wheel of the app, built once a session for the tests that install it."""

from tests.project.adopter import wheel  # noqa: F401 (a fixture)
