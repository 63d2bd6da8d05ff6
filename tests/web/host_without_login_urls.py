"""A host's URLconf with no login page of its own: the app at /news/."""

from django.urls import include, path

urlpatterns = [
    path("api/", include("articles.api.urls")),
    path("news/", include("articles.urls")),
]
