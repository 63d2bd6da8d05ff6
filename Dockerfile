# votesite: gunicorn on production settings, as a non-root user (README, "Docker").
# Build: docker build -t votesite .   Run it with compose.yaml, or give it DJANGO_SECRET_KEY,
# DJANGO_ALLOWED_HOSTS, REDIS_URL and DATABASE_URL.
FROM python:3.11-slim AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
COPY requirements.lock /tmp/requirements.lock
# The runtime set only (requirements.lock: requirements.txt with every package pinned and
# hashed); the test tools stay out of the image.
RUN python -m venv /opt/venv && \
    /opt/venv/bin/pip install --require-hashes --no-deps -r /tmp/requirements.lock

FROM python:3.11-slim
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    DJANGO_SETTINGS_MODULE=votesite.settings \
    DJANGO_DEBUG=false \
    DJANGO_STATIC_MANIFEST=true \
    VOTESITE_VAR_DIR=/app/var \
    DJANGO_LOG_FORMAT=json \
    WEB_CONCURRENCY=2
RUN useradd --system --uid 10001 --no-create-home --home-dir /app votesite
COPY --from=build /opt/venv /opt/venv
WORKDIR /app
COPY manage.py ./
COPY votesite ./votesite
COPY articles ./articles
COPY templates ./templates
COPY gunicorn.conf.py ./
COPY docker/entrypoint.sh /usr/local/bin/votesite-entrypoint
# The code stays root's and read-only to the site; only var/ (collected static files) is its.
RUN mkdir -p /app/var && chown votesite /app/var
USER votesite
EXPOSE 8000
ENTRYPOINT ["votesite-entrypoint"]
# gunicorn.conf.py: gthread workers (WEB_CONCURRENCY of them, GUNICORN_THREADS threads each)
# and timeouts, the same settings as `make serve`; the site logs each request itself.
CMD ["gunicorn", "votesite.wsgi:application", "--config", "gunicorn.conf.py", "--bind", "0.0.0.0:8000"]
