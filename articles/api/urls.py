"""URLs of the REST API (namespace "api"), at whatever prefix the host includes them."""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.urls import path, re_path
from rest_framework.routers import APIRootView, DefaultRouter

from articles.api import comments, domains, flags, inbox, schema, site, views
from articles.api.renderers import fast_renderers

app_name = "api"


class ApiRoot(APIRootView):
    """The API's entry point: a link to each collection; Docs describes every operation."""

    name = "API root"

    def get_renderers(self) -> list[Any]:
        # The API's renderers (its browsable page's template), not a store-reading base
        # class: the index answers while Redis is down.
        return fast_renderers(super().get_renderers())


class Router(DefaultRouter):
    APIRootView = ApiRoot
    # No ".json" suffix routes: the viewsets take no `format` argument (a suffix was a 500),
    # the schema declares none, and `?format=json` or an Accept header picks JSON anyway.
    include_format_suffixes = False


router = Router()
router.register("articles", views.ArticleViewSet, basename="article")
router.register(
    r"articles/(?P<id>[0-9]{1,18})/comments",
    comments.ArticleCommentViewSet,
    basename="article-comment",
)
router.register("comments", comments.CommentViewSet, basename="comment")
router.register(
    r"articles/(?P<id>[0-9]{1,18})/flag", flags.ArticleFlagViewSet, basename="article-flag"
)
router.register(
    r"comments/(?P<id>[0-9]{1,18})/flag", flags.CommentFlagViewSet, basename="comment-flag"
)
router.register("flags", flags.FlagQueueViewSet, basename="flag")
router.register(
    r"flags/(?P<kind>article|comment)", flags.FlagDecisionViewSet, basename="flag-decision"
)
router.register("groups", site.GroupViewSet, basename="group")
router.register("users", site.UserViewSet, basename="user")
router.register("users", comments.UserCommentViewSet, basename="user-comment")
router.register("domains", domains.DomainViewSet, basename="domain")
router.register("inbox", inbox.InboxViewSet, basename="inbox")
router.register("modlog", site.ModlogViewSet, basename="modlog")
router.register("stats", site.StatsViewSet, basename="stats")

# The interactive docs render drf_spectacular's templates and the sidecar's static files,
# which need those apps installed (system check articles.W004 says so otherwise).
docs = [
    path("docs/", schema.SwaggerView.as_view(url_name="api:schema"), name="docs"),
    path("redoc/", schema.RedocView.as_view(url_name="api:schema"), name="redoc"),
]
if not (apps.is_installed("drf_spectacular") and apps.is_installed("drf_spectacular_sidecar")):
    docs = []

# The router's routes first: Django tries the patterns in order, a miss costing about a
# microsecond, and they are the busy ones (a vote). No router route matches the paths of
# the four views below them, so every path resolves as it would in any order.
urlpatterns = [
    *router.urls,
    path("auth/token/", site.TokenView.as_view(), name="auth-token"),
    path("schema/", schema.SchemaView.as_view(), name="schema"),
    *docs,
    # [\s\S], not ".": a path may hold an encoded newline (%0A), which "." would not match.
    re_path(r"^[\s\S]*$", site.NotFoundView.as_view(), name="not-found"),
]
