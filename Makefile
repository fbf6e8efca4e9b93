# Braid: `make run` and `make test` are the whole set-up on a fresh machine.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
PYTHON ?= $(shell scripts/find-python)
INSTALLED := $(VENV)/.installed
NODE_MODULES := frontend/node_modules/.installed
MANIFEST := static/dist/.vite/manifest.json
# The OpenID provider the single sign-on tests start (tests/oidc/, docs/sso.md).
TEST_OIDC := tests/oidc/node_modules/.installed
FRONTEND_SOURCES := $(shell find frontend/src frontend/index.html frontend/vite.config.ts frontend/tsconfig*.json -type f 2>/dev/null)
# The PostgreSQL pass's server (its test database is test_<name>) and the suite's own Redis
# database, which every session that used it empties at its end.
PG_URL ?= postgres://postgres@127.0.0.1:5432/test
REDIS_TEST_URL ?= redis://127.0.0.1:6379/15

.PHONY: install run run-scaled test test-core test-postgres lint format typecheck bench bench-quick bench-auth bench-peers chaos clean oracle

install: $(INSTALLED) $(MANIFEST)

$(PY):
	@test -n "$(PYTHON)" || exit 1
	$(PYTHON) -m venv $(VENV)

# Reinstalls only when pyproject.toml changes, so a second `make run` is quick.
$(INSTALLED): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $@

$(NODE_MODULES): frontend/package.json frontend/package-lock.json
	cd frontend && npm ci --no-audit --no-fund
	touch $@

$(MANIFEST): $(NODE_MODULES) $(FRONTEND_SOURCES)
	cd frontend && npm run build

$(TEST_OIDC): tests/oidc/package.json tests/oidc/package-lock.json
	cd tests/oidc && npm ci --no-audit --no-fund
	touch $@

# `make run` and `make run-scaled` serve plain http: no HTTPS redirect, no secure cookies
# (DJANGO_HTTPS=0). DEBUG stays off unless DJANGO_DEBUG=1 is set. HOST and PORT (from the
# environment or `make run PORT=8080`) choose the address; the Procfile's web line reads them.
HOST ?= 127.0.0.1
PORT ?= 8000
run run-scaled: export DJANGO_HTTPS ?= 0

run: install
	$(PY) manage.py migrate --noinput
	$(PY) manage.py braid demo
	$(PY) manage.py braid serve --host $(HOST) --port $(PORT)

# Scaled mode: Daphne plus two separate Celery workers against DATABASE_URL and REDIS_URL.
run-scaled: install
	@test -n "$$DATABASE_URL" -a -n "$$REDIS_URL" || { echo "set DATABASE_URL and REDIS_URL" >&2; exit 1; }
	$(PY) manage.py migrate --noinput
	$(PY) manage.py braid demo
	HOST=$(HOST) PORT=$(PORT) $(PY) -m braid.supervise Procfile

# The tests' Redis database (tests/servers.py), unless BRAID_TEST_REDIS_URL is set already.
test test-postgres: export BRAID_TEST_REDIS_URL ?= $(REDIS_TEST_URL)

# Every phase runs even when one before it fails; the last lines say which failed, and how
# many browser tests were skipped and why (scripts/run-phases).
test: install $(TEST_OIDC)
	@scripts/run-phases \
	  "front end (vitest)" "cd frontend && npm test --silent" \
	  "Python on SQLite, scaled, browser" "$(PY) -m pytest" \
	  "Django on PostgreSQL" "$(MAKE) --no-print-directory test-postgres"

# The same Django tests again, on PostgreSQL (skipped with a reason when it is unreachable).
# Each pass drops its test database and empties the test Redis at its end (tests/cleanup.py).
test-postgres: install $(TEST_OIDC)
	DATABASE_URL=$(PG_URL) $(PY) -m pytest tests/django -m "not browser" -p no:cacheprovider

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	cd frontend && npm run typecheck

format: install
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

typecheck: install
	$(VENV)/bin/mypy

# The engine core against LangGraph and SpiffWorkflow, which come from the optional .[bench] group.
bench: $(INSTALLED)
	$(VENV)/bin/pip install -q -e '.[bench]'
	$(PY) -m bench.run --out bench/RESULTS.md
	$(PY) bench/bench_validate.py
	$(PY) -m bench.durable --out bench/DURABLE.md
	$(PY) -m bench.monitor --out bench/MONITOR.md
	$(PY) -m bench.auth --out bench/AUTH.md

# An authenticated GET with an API token against Basic auth, on PostgreSQL (bench/auth.py).
bench-auth: $(INSTALLED)
	$(PY) -m bench.auth --out bench/AUTH.md

# Braid in scaled mode against Temporal, DBOS, LangGraph+PostgresSaver and raw Celery (W1-W4,
# kill -9), round by round: bench/PEERS.md. QUICK=1: 2 rounds instead of 10.
bench-peers: $(INSTALLED)
	$(VENV)/bin/pip install -q -e '.[bench]'
	$(PY) -m bench.durable_peers.run $(if $(QUICK),--quick) --out bench/PEERS.md

bench-quick: $(INSTALLED)
	$(VENV)/bin/pip install -q -e '.[bench]'
	$(PY) -m bench.run --quick
	$(PY) bench/bench_validate.py --quick

# The chaos suite (docs/reliability.md): the fence's property test with 50,000 operations,
# then RUNS generated runs on Daphne and 3 Celery workers over PostgreSQL and a Redis of its
# own, under faults drawn from SEED; it prints the invariants' table and fails unless all
# are 0. The same SEED replays the same workload and schedule. CHAOS_ARGS adds options
# (`.venv/bin/python -m chaos --help`).
SEED ?= 1
RUNS ?= 300
chaos: $(INSTALLED)
	BRAID_FENCE_OPERATIONS=50000 $(PY) -m pytest -q -p no:cacheprovider \
		tests/django/test_durable__fence_property.py --hypothesis-seed=$(SEED)
	$(PY) -m chaos --seed $(SEED) --runs $(RUNS) $(CHAOS_ARGS)

clean:
	rm -rf $(VENV) frontend/node_modules static/dist tests/oidc/node_modules

# The monitor's colors against the oracle (tests/oracle, docs/monitor-oracle.md): many runs.
oracle: install
	BRAID_ORACLE_RANDOM=1 BRAID_ORACLE_EXAMPLES=2000 $(PY) -m pytest tests/oracle -p no:cacheprovider -q -rxX
