"""votesite URL configuration: the articles app's pages at /, its API at /api/."""

from django.contrib import admin
from django.urls import include, path
from django.views.generic import RedirectView
from django_prometheus.exports import ExportToDjangoView

from articles.store.logins import AdminLoginForm
from articles.web.helpers import internal_or_staff

# The admin's login says why a locked login waits, as the site's own does.
admin.site.login_form = AdminLoginForm

# A disallowed Host (and any other 400 Django raises itself) under /api/ answers JSON.
handler400 = "articles.http.responses.bad_request"

urlpatterns = [
    # First: the API's requests are the busiest (a vote), each pattern tried before costs
    # about a microsecond, and none of the others matches a path under api/.
    path("api/", include("articles.api.urls")),
    # /healthz (and /healthz/ready): Redis and the database; /healthz/live: the process.
    path("", include("articles.health_urls")),
    # Prometheus: django-prometheus' request, database and cache figures and the app's own
    # (articles/operations/metrics.py); for staff and ARTICLES_HEALTH_DETAIL_NETWORKS addresses.
    path("metrics", internal_or_staff(ExportToDjangoView), name="metrics"),
    # The admin's own password change checks the old password outside the failed-login
    # limits (Django fixes its form): staff change theirs on the site's page, which counts it.
    path(
        "admin/password_change/",
        RedirectView.as_view(pattern_name="articles:password-change", permanent=False),
    ),
    path("admin/", admin.site.urls),
    path("", include("articles.urls")),
]
