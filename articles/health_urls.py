"""Health checks, for a host to include at its root (no namespace; orchestrators want fixed
paths): `path("", include("articles.health_urls"))`.

/healthz/live answers while the process does (liveness: restart when it fails);
/healthz/ready and /healthz check Redis and the database (readiness: route no traffic while
either is down, 503)."""

from django.urls import path

from articles.web.views import healthz, healthz_live

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("healthz/ready", healthz, name="healthz-ready"),
    path("healthz/live", healthz_live, name="healthz-live"),
]
