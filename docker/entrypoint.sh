#!/bin/sh
# The votesite container's start: bring the database schema up to date, collect the static
# files (hashed names, compressed: DJANGO_STATIC_MANIFEST=true in the image), then run the
# command, gunicorn by default (the Dockerfile's CMD, with the project's gunicorn.conf.py:
# gthread workers and their timeouts, the same as `make serve`).
set -eu
python manage.py migrate --noinput
python manage.py collectstatic --noinput --verbosity 0
exec "$@"
