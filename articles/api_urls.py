"""URLs of the REST API, mounted at /api/ under the namespace "api"."""

from __future__ import annotations

from django.urls import path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView
from rest_framework.routers import DefaultRouter

from articles import api

app_name = "api"

router = DefaultRouter()
router.register("articles", api.ArticleViewSet, basename="article")
router.register("groups", api.GroupViewSet, basename="group")
router.register("users", api.UserViewSet, basename="user")
router.register("modlog", api.ModlogViewSet, basename="modlog")
router.register("stats", api.StatsViewSet, basename="stats")

urlpatterns = [
    path("auth/token/", api.TokenView.as_view(), name="auth-token"),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api:schema"), name="docs"),
    path("redoc/", SpectacularRedocView.as_view(url_name="api:schema"), name="redoc"),
    *router.urls,
    # [\s\S], not ".": a path may hold an encoded newline (%0A), which "." would not match.
    re_path(r"^[\s\S]*$", api.NotFoundView.as_view(), name="not-found"),
]
