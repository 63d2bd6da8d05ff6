#!/bin/sh
# The votesite container's start: collect the static files (hashed names, compressed:
# DJANGO_STATIC_MANIFEST=true in the image), then run the command, gunicorn by default (the
# Dockerfile's CMD, with the project's gunicorn.conf.py: gthread workers and their timeouts,
# the same as `make serve`).
# The schema is not migrated here: several site containers starting together would race
# each other to it.
# compose.yaml runs `python manage.py migrate` once, in its one-shot `migrate` service,
# before any site container starts; elsewhere run that command the same way.
set -eu
python manage.py collectstatic --noinput --verbosity 0
# Prometheus' multiprocess mode: each gunicorn worker writes its figures into this folder and
# /metrics adds them up. Emptied at each start: the files of the last run's workers are stale.
export PROMETHEUS_MULTIPROC_DIR="${PROMETHEUS_MULTIPROC_DIR:-${VOTESITE_VAR_DIR:-/app/var}/prometheus}"
rm -rf "$PROMETHEUS_MULTIPROC_DIR"
mkdir -p "$PROMETHEUS_MULTIPROC_DIR"
exec "$@"
