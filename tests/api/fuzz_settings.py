"""Settings of a throwaway server to fuzz (README, "Fuzzing a live server"): the project's,
with the request limits off. schemathesis sends hundreds of requests a minute from one
address and one user; past a limit every answer is a 429, which tests nothing else. The
failed-login limits stay: a 429 there is what the schema declares."""

from votesite.settings import *  # noqa: F403

ARTICLES_RATE_LIMITS = {
    "api": None,
    "api_user": None,
    "api_write": None,
    "post": None,
    "vote": None,
    "comment": None,
}
