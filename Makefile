# votesite: `make run` serves the site on the embedded Redis, `make test` runs every test.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.requirements-installed
HOST ?= 127.0.0.1
PORT ?= 8000
CHROMIUM := /usr/bin/chromium

.PHONY: install redis redis-stop migrate demo run test lint format browser wrk serve bench bench-smoke schema

$(STAMP): requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $(STAMP)

install: $(STAMP)

# The embedded Redis (only when REDIS_URL is unset): data and AOF under var/redis.
redis: install
	@if [ -z "$$REDIS_URL" ]; then $(PY) manage.py redis start; fi

redis-stop: install
	$(PY) manage.py redis stop

migrate: install
	$(PY) manage.py migrate --noinput

demo: redis migrate
	$(PY) manage.py load_demo --if-empty

run: demo
	$(PY) manage.py runserver $(HOST):$(PORT)

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

format: install
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

# The committed OpenAPI schema (a test fails until it matches the code).
schema: install
	$(PY) manage.py spectacular --file docs/openapi.yaml

test: install lint browser
	$(PY) -m pytest

# The browser tests drive Debian's chromium through Playwright (its own download needs the
# internet). Installs it with apt-get when missing and possible; else says what to install.
browser:
	@tools/apt-ensure $(CHROMIUM) chromium "The browser tests"

wrk:
	@tools/apt-ensure /usr/bin/wrk wrk "The HTTP benchmarks"

# Production serving: gunicorn, DEBUG off, static files through whitenoise (docs/performance.md).
WORKERS ?= 2
serve: redis migrate
	$(PY) manage.py collectstatic --noinput -v 0
	DJANGO_DEBUG=false $(VENV)/bin/gunicorn votesite.wsgi:application \
		--bind $(HOST):$(PORT) --workers $(WORKERS) --access-logfile -

# The benchmark suite (bench/): about 7 min on 2 cores (bounded to ~15); rewrites the table in
# docs/performance.md. bench-smoke runs every part on tiny data in under a minute.
bench: install wrk
	$(PY) -m bench.run --out docs/performance.md

bench-smoke: install
	$(PY) -m bench.run --smoke
