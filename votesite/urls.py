"""votesite URL configuration: the articles app's pages at /, its API at /api/."""

from django.contrib import admin
from django.urls import include, path

from articles.web.views import healthz

# A disallowed Host (and any other 400 Django raises itself) under /api/ answers JSON.
handler400 = "articles.responses.bad_request"

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("api/", include("articles.api.urls")),
    path("", include("articles.urls")),
]
