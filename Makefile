# alp — the two commands a new machine needs are `make run` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: install man run test lint typecheck unit integration e2e chaos fuzz bench bench-full runtimes editors browser systemd postgres openrpc clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,semantic,channels]'
	touch $(STAMP)

## .venv/ with alp installed in it (editable), nothing else
install: $(STAMP)

## the manual pages, generated from the parsers (man -l build/man/alp.1)
man: $(STAMP)
	mkdir -p build/man
	$(BIN)/alp man > build/man/alp.1
	$(BIN)/alpd man > build/man/alpd.1

## alpd in the foreground on the embedded defaults (~/.alp, the default socket)
run: $(STAMP)
	$(BIN)/alpd

## lint + type check + the whole suite (unit, integration, fuzz, chaos, e2e with the real CLIs)
test: $(STAMP) runtimes editors browser systemd postgres lint typecheck
	$(BIN)/python -m pytest -q tests

lint: $(STAMP)
	$(BIN)/ruff check alpd alpctl protocol tests bench
	$(BIN)/ruff format --check alpd alpctl protocol tests bench

typecheck: $(STAMP)
	$(BIN)/mypy

## the real claude and codex CLIs, pinned, cached outside the checkout
runtimes:
	bash tests/e2e/install_runtimes.sh

## what the editor tests need: Debian's neovim (apt, when nvim is missing) and the VS Code
## extension's npm packages (exactly the lock's, in editors/vscode/node_modules)
editors:
	command -v nvim >/dev/null || { apt-get -o DPkg::Lock::Timeout=600 update -q && apt-get -o DPkg::Lock::Timeout=600 install -y -q neovim; }
	cd editors/vscode && { test -f node_modules/.package-lock.json && \
		cmp -s package-lock.json .lock-installed || { npm ci --no-audit --no-fund && \
		cp package-lock.json .lock-installed; }; }

## what the browser tests need: Debian's chromium (apt, when missing), which Playwright for
## Python drives at /usr/bin/chromium (never `playwright install`: nothing downloads a browser)
browser:
	command -v chromium >/dev/null || { apt-get -o DPkg::Lock::Timeout=600 update -q && apt-get -o DPkg::Lock::Timeout=600 install -y -q chromium; }

## systemd-analyze, which checks the units (tests/unit/test_units.py; a skip fails under CI)
systemd:
	command -v systemd-analyze >/dev/null || { apt-get -o DPkg::Lock::Timeout=600 update -q && apt-get -o DPkg::Lock::Timeout=600 install -y -q systemd; }

## Debian's PostgreSQL server (apt, when missing): the store tests run on it too, each session
## in a private cluster of its own (tests/postgres_cluster.py; a skip fails under CI)
postgres:
	ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { apt-get -o DPkg::Lock::Timeout=600 update -q && apt-get -o DPkg::Lock::Timeout=600 install -y -q postgresql; }

unit: $(STAMP)
	$(BIN)/python -m pytest -q tests/unit tests/fuzz

integration: $(STAMP)
	$(BIN)/python -m pytest -q tests/integration

e2e: $(STAMP) runtimes
	$(BIN)/python -m pytest -q tests/e2e

## more kill -9 cycles than the suite runs
chaos: $(STAMP)
	ALP_CHAOS_CYCLES=200 $(BIN)/python -m pytest -q tests/chaos

## the fuzzers (framing, JSON-RPC parsing, a real daemon) with 50 times their CI budget
fuzz: $(STAMP)
	ALP_FUZZ_SCALE=$${ALP_FUZZ_SCALE:-50} $(BIN)/python -m pytest -q --timeout 7200 \
		--hypothesis-show-statistics tests/fuzz

## quick sizes (a few minutes); docs/benchmarks.md has the figures of the full run
bench: $(STAMP)
	$(BIN)/python -m bench

## the sizes the goals are stated at: 300 MB / 1 GB corpora, 10,000 threads, 1,000,000 entries
bench-full: $(STAMP)
	ALP_BENCH_SESSIONS_MB=300 ALP_BENCH_SYNC_MB=100 ALP_BENCH_SYNC_ROUNDS=3 \
	ALP_BENCH_SEARCH_MB=300,1000 ALP_BENCH_THREADS=10000 ALP_BENCH_ENTRIES=1000000 \
	$(BIN)/python -m bench

## regenerate the checked-in OpenRPC document from the wire types
openrpc: $(STAMP)
	$(BIN)/python -m protocol.openrpc > protocol/openrpc.json

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
