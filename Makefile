# Two commands set everything up:  `make run`  and  `make test`.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: install run test lint format browser bench clean chart-readme chart-install-test redaction-catalogue

$(STAMP): pyproject.toml client/pyproject.toml client/sessionledger/core/version.py
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# The server declares the client (pip install . brings it); the second step makes it editable.
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	$(BIN)/python -m pip install --quiet --no-deps -e ./client
	# The client's wheel, which the server serves at /client/ (config/client_wheel.py)
	$(BIN)/python -m pip wheel --quiet --no-deps --no-build-isolation --wheel-dir $${SESSIONLEDGER_DATA_DIR:-.data}/client-dist ./client
	touch $(STAMP)

install: $(STAMP)

## make run: embedded or configured services, migrate, demo data, web + worker + beat
run: install
	$(BIN)/python -m config.localstack run

## make test: the whole suite (installs Debian's chromium for browser tests when missing)
test: install browser
	$(BIN)/python -m config.localstack exec -- $(BIN)/python -m pytest $(PYTEST_ARGS)

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

## make redaction-catalogue: rebuild the redactor's gitleaks catalogue from the pinned release (tools/redaction_catalogue.py) and show the diff; GITLEAKS_GIT=path reads a local clone instead of GitHub
redaction-catalogue: install
	$(BIN)/python tools/redaction_catalogue.py $(if $(GITLEAKS_GIT),--git $(GITLEAKS_GIT))
	git diff --stat -- client/sessionledger/core/redaction/catalogue/
	git diff -- client/sessionledger/core/redaction/catalogue/gitleaks.json | head -200

## make forge-openapi NPM_TGZ=path: rebuild tests/fixtures/github_openapi/ from `npm pack @octokit/openapi@23.0.2` (tools/forge_openapi.py) and show the diff
forge-openapi: install
	$(BIN)/python tools/forge_openapi.py $(NPM_TGZ)
	git diff --stat -- tests/fixtures/github_openapi/

clean:
	rm -rf $(VENV) .data test-artifacts
