# Two commands set everything up:  `make run`  and  `make test`.
# The newest Python 3.11–3.13 that runs here (a pyenv shim of an unselected version does not); CI tests
# the oldest and the newest (.ci/run, docs/deployment.md "Python versions"). `make PYTHON=python3.11 …`
# picks one; it is read only when the venv is created (`make clean` first to change it).
PYTHON ?= $(or $(shell for p in python3.13 python3.12 python3.11; do $$p -c '' 2>/dev/null && { echo $$p; break; }; done),\
                $(error No Python 3.11, 3.12 or 3.13 found: install one, or pass PYTHON=/path/to/python3.x))
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
UV     := uv==0.13.9

.PHONY: install run test test-compat lint lock format browser bench clean chart-readme chart-install-test redaction-catalogue

# $(call install_into,VENV): every dependency exactly as requirements-dev.lock pins it, checked against its
# hashes (a universal lock: one file for 3.11–3.13 and every OS, markers choose), then the server and the
# client editable on top, without resolving again (their dependencies are all in the lock: `pip check`).
define install_into
	test -x $(1)/bin/python || $(PYTHON) -m venv $(1)
	$(1)/bin/python -m pip install --quiet --require-hashes -r requirements-dev.lock
	$(1)/bin/python -m pip install --quiet --no-deps --no-build-isolation -e . -e ./client
	$(1)/bin/python -m pip check
endef

$(STAMP): pyproject.toml client/pyproject.toml client/sessionledger/core/version.py requirements-dev.lock
	$(call install_into,$(VENV))
	# The client's wheel, which the server serves at /client/ (config/client_wheel.py)
	$(BIN)/python -m pip wheel --quiet --no-deps --no-build-isolation --wheel-dir $${SESSIONLEDGER_DATA_DIR:-.data}/client-dist ./client
	touch $(STAMP)

install: $(STAMP)

## make run: embedded or configured services, migrate, demo data, web + worker + beat
run: install
	$(BIN)/python -m config.localstack run

## make test: the whole suite (installs Debian's chromium for browser tests when missing), in one pytest-xdist
## worker per core (at most 4; TEST_WORKERS=0 runs it in this process), each test file whole in one worker:
## each worker has its own test database, S3 server, queue and cache prefix (tests/services.py)
TEST_WORKERS ?= auto --maxprocesses 4
XDIST = $(if $(filter 0,$(TEST_WORKERS)),,-n $(TEST_WORKERS) --dist loadfile)
test: install browser
	$(BIN)/python -m config.localstack exec -- $(BIN)/python -m pytest $(XDIST) $(PYTEST_ARGS)

## make test-compat PYTHON=python3.13: CI's second Python. In .venv-python3.13 beside .venv, the tests of
## what leans on the interpreter: the client's library (redaction's regexes, the transcript formats,
## attribution, steps, terminal safety, the fuzzers), its capture path and queue, and the server's
## configuration and broker. The whole suite runs on the other Python (`make test`); running it twice
## would double CI. `make test-compat COMPAT_TESTS='-m "not e2e and not browser" tests'` runs every test.
COMPAT_VENV  = .venv-$(notdir $(PYTHON))
COMPAT_TESTS ?= -m "not e2e and not browser" -p no:cacheprovider \
	tests/client/test_redact*.py tests/client/test_formats*.py tests/client/test_attribution.py \
	tests/client/test_attribution_matching.py tests/client/test_steps*.py tests/client/test_fit.py \
	tests/client/test_gitrefs.py tests/client/test_terminal_safety.py tests/client/test_fuzz.py \
	tests/client/test_capture.py tests/client/test_queue.py tests/client/test_hook_contract.py \
	tests/test_config.py tests/test_broker.py
test-compat:
	$(call install_into,$(COMPAT_VENV))
	$(COMPAT_VENV)/bin/python -m config.localstack exec -- $(COMPAT_VENV)/bin/python -m pytest $(XDIST) $(COMPAT_TESTS)

## make lint: ruff (lint + format), the import layers (import-linter), mypy over the server and the client,
## and mypy --strict as a ratchet (tools/mypy_ratchet.py: no package gains strict errors, the core has none),
## then helm lint and Kubernetes' schemas over the rendered chart (tools/check_chart.py)
lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/mypy
	$(BIN)/python tools/mypy_ratchet.py
	$(BIN)/python tools/check_chart.py

## make lock: regenerate requirements.lock (the image's runtime: Python 3.11, Linux) and requirements-dev.lock
## (runtime, dev and CI tools for 3.11–3.13 on any OS, the runtime at requirements.lock's versions), with
## hashes, by uv from PyPI. After changing a dependency in pyproject.toml: `make lock`, then `make install`.
## Pins move only where they must; LOCK_ARGS=--upgrade moves every one to its newest release.
# $(call compile_lock,FILE,OPTIONS): uv pip compile into FILE (its pins are the preferences), its comment kept
define compile_lock
	sed '/^[a-z0-9]/,$$d' $(1) > $(1).header
	$(BIN)/uv pip compile --quiet pyproject.toml $(2) --generate-hashes --no-emit-package sessionledger --no-header $(LOCK_ARGS) -o $(1)
	cat $(1).header $(1) > $(1).new && mv $(1).new $(1) && rm $(1).header
endef
lock:
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	test -x $(BIN)/uv || $(BIN)/python -m pip install --quiet '$(UV)'
	$(call compile_lock,requirements.lock,--python-version 3.11 --python-platform x86_64-manylinux_2_28)
	$(call compile_lock,requirements-dev.lock,--extra dev --universal --fork-strategy fewest --python-version 3.11 --constraint requirements.lock)

## make chart-readme: deploy/helm/sessionledger/README.md from the comments of its values.yaml
chart-readme: install
	$(BIN)/python tools/chart_readme.py

## make chart-install-test IMAGE=repo:tag: `ct install` on the current kubectl context's cluster (docs/deployment.md)
chart-install-test:
	tools/chart_install_test.sh

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

browser:
	@test -x /usr/bin/chromium || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq chromium >/dev/null; \
	  else echo "Browser tests need Debian's chromium: sudo apt-get install chromium" >&2; fi; }

## make bench: every bench/ script, one JSON report in test-artifacts/bench/report.json and the figures table of docs/scaling.md (BENCH_ARGS="--only parse" leaves the table alone)
bench: install
	$(BIN)/python -m config.localstack exec -- $(BIN)/python bench/run_all.py $(BENCH_ARGS)

## make redaction-catalogue: rebuild the redactor's catalogues (gitleaks' rules, Kingfisher's provider names) from their pinned releases (tools/redaction_catalogue.py) and show the diff; GITLEAKS_GIT=path and KINGFISHER_GIT=path read local clones instead of GitHub
redaction-catalogue: install
	$(BIN)/python tools/redaction_catalogue.py $(if $(GITLEAKS_GIT),--git $(GITLEAKS_GIT)) $(if $(KINGFISHER_GIT),--kingfisher-git $(KINGFISHER_GIT))
	git diff --stat -- client/sessionledger/core/redaction/catalogue/
	git diff -- client/sessionledger/core/redaction/catalogue/gitleaks.json | head -200
	git diff -- client/sessionledger/core/redaction/catalogue/kingfisher-providers.json | head -100

## make forge-openapi NPM_TGZ=path: rebuild tests/fixtures/github_openapi/ from `npm pack @octokit/openapi@23.0.2` (tools/forge_openapi.py) and show the diff
forge-openapi: install
	$(BIN)/python tools/forge_openapi.py $(NPM_TGZ)
	git diff --stat -- tests/fixtures/github_openapi/

clean:
	rm -rf $(VENV) .venv-* .data test-artifacts
