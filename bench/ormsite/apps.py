from django.apps import AppConfig


class OrmsiteConfig(AppConfig):
    """Baseline B of the benchmark: the voting site a Django developer would build on the
    ORM, without Redis. Benchmark-only; never installed by votesite.settings."""

    name = "bench.ormsite"
    label = "ormsite"
    default_auto_field = "django.db.models.BigAutoField"
