"""drf-spectacular settings of the app's schema. No imports: the host's settings module
may import this (SPECTACULAR_SETTINGS), so that `manage.py spectacular` and the
drf_spectacular system check see what the app's schema view serves."""

SCHEMA_SETTINGS = {
    "TITLE": "Articles API",
    "DESCRIPTION": (
        "Post, vote on and browse articles, as on the site's pages.\n\n"
        "**Authentication.** Reading needs no login. To post, vote or moderate, get a token "
        "(`POST /api/auth/token/` with your username and password) and send it as "
        "`Authorization: Token <token>`; a browser logged in to the site may use its session "
        "instead, with the CSRF token in `X-CSRFToken`. A bad token is a 401 even where no "
        "login is needed.\n\n"
        "**Rate limits.** Every request counts against limits per client address and per "
        "user; each operation gives those it counts in, with their default figures. Past one: "
        "429 with Retry-After; answers carry RateLimit-Limit, RateLimit-Remaining and "
        "RateLimit-Reset.\n\n"
        "**Errors** are JSON: `detail` for people, `code` for programs, and `field` (with "
        "`errors`) for the input at fault. Bad input changes nothing. 503 when the article "
        "store or the account database is unreachable, with Retry-After.\n\n"
        "**Lists** come in pages: `count`, `next`, `previous` and `results`; a page past the "
        "end is empty."
    ),
    "VERSION": "1.0.0",
    # The docs pages load their JavaScript from the site's own static files (no CDN).
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # No deep links in Swagger UI: each is a link inside the operation's toggle button,
    # which screen readers cannot reach (axe-core: nested-interactive).
    "SWAGGER_UI_SETTINGS": {"deepLinking": False},
    "ENUM_NAME_OVERRIDES": {
        "VoteEnum": "articles.api.serializers.VOTE_CHOICES",
        "FlagReasonEnum": "articles.api.flags.FLAG_REASONS",
        "FlagKindEnum": "articles.api.flags.FLAG_KINDS",
    },
    # drf-spectacular's own enum hook, one schema for a field that takes "" (its own
    # oneOf took "" twice, so refused it), then the answers and headers common to every
    # operation (401 for a bad token, 405, 406, RateLimit-*, Retry-After), and the texts'
    # paths at the host's mount point.
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "articles.api.schema.exclusive_blank_alternatives",
        "articles.api.schema.declare_common_answers",
        "articles.api.schema.name_the_hosts_paths",
    ],
}
