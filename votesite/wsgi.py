"""WSGI entry point (gunicorn votesite.wsgi)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "votesite.settings")

application = get_wsgi_application()
