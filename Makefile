# Entry points of the study. Every target is idempotent.
#   make setup   install what is missing (Debian packages, .venv); in `nix develop` only check
#   make build   build/middleware.jar, build/loadgen.jar, build/benchmarks.jar
#   make test    Java, Python and workflow test suites
#   make paper   run the pipeline on the default profile and build paper/report.pdf
#   make bench   JMH, loadgen vs memcaslap, middleware vs memcached and twemproxy
#   make fuzz    each Jazzer fuzz test for FUZZ_SECONDS (default 60): executions, coverage

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

MVN ?= mvn -B -q -f middleware/pom.xml
PROFILE ?= default
CORES ?= 2

# In a Nix dev shell the flake provides Python and its packages; elsewhere the project venv does.
ifdef IN_NIX_SHELL
VENV_STAMP :=
PY := python3
BIN :=
else
VENV_STAMP := .venv/.installed
PY := .venv/bin/python
BIN := .venv/bin/
# Pipeline rules call python3 and mwlab; they must find the venv's.
export PATH := $(CURDIR)/.venv/bin:$(PATH)
endif
export PYTHONPATH := $(CURDIR)

JAVA_SOURCES := $(shell find middleware -name '*.java' -o -name 'pom.xml' -o -path '*/src/main/resources/*' -type f 2>/dev/null)
JARS := build/middleware.jar build/loadgen.jar build/benchmarks.jar

.PHONY: help setup build test test-java test-python test-workflow lint paper bench clean

help:
	@sed -n 's/^#   //p' $(MAKEFILE_LIST)

# --- setup -------------------------------------------------------------------------------

ifdef IN_NIX_SHELL
setup:
	@$(PY) -m mwlab tools --check >/dev/null && echo "setup: nix dev shell, all tools present"
else
setup: debian-packages $(VENV_STAMP)

$(VENV_STAMP): pyproject.toml requirements.lock | debian-packages
	@echo "setup: creating .venv with pinned Python packages"
	@test -x .venv/bin/python || python3 -m venv .venv
	@.venv/bin/pip install -q --disable-pip-version-check -c requirements.lock -e '.[dev]'
	@touch $@

.PHONY: debian-packages
debian-packages:
	@scripts/setup-debian.sh
endif

# --- build -------------------------------------------------------------------------------

build: $(JARS)

$(JARS) &: $(JAVA_SOURCES)
	@echo "build: compiling the Java modules"
	@$(MVN) package -DskipTests
	@mkdir -p build
	@cp middleware/core/target/middleware.jar build/middleware.jar
	@cp middleware/loadgen/target/loadgen.jar build/loadgen.jar
	@cp middleware/jmh/target/benchmarks.jar build/benchmarks.jar

# --- tests -------------------------------------------------------------------------------

test: setup build
	@$(MAKE) --no-print-directory test-java lint test-python test-workflow
	@echo "test: all suites passed"

test-java:
	@echo "test: Java (JUnit 5)"
	@mvn -B --no-transfer-progress -Dstyle.color=never -f middleware/pom.xml test

lint:
	@echo "test: ruff"
	@$(BIN)ruff check .
	@$(BIN)ruff format --check .
	@if command -v nix-instantiate >/dev/null; then \
	  nix-instantiate --parse flake.nix >/dev/null && echo "test: flake.nix parses"; \
	else echo "test: nix-instantiate not installed, flake syntax not checked"; fi

test-python:
	@echo "test: Python (pytest)"
	@$(PY) -m pytest -q

test-workflow:
	@echo "test: workflow (azure plan, then the smoke profile end to end)"
	@$(BIN)snakemake --profile azure --dry-run --quiet rules
	@rm -rf results/smoke
	@$(BIN)snakemake --profile workflows/profiles/smoke --cores $(CORES) results/smoke/report.pdf
	@test -s results/smoke/report.pdf
	@$(PY) scripts/check_incremental.py smoke
	@echo "test: workflow passed: results/smoke/report.pdf"

# --- products ----------------------------------------------------------------------------

paper: setup build
	@$(BIN)snakemake --profile workflows/profiles/$(PROFILE) --cores $(CORES) results/$(PROFILE)/report.pdf
	@cp results/$(PROFILE)/report.pdf paper/report.pdf
	@echo "paper: paper/report.pdf (profile $(PROFILE))"

bench: setup build
	@java -jar build/benchmarks.jar -f 1 -wi 3 -i 5 -w 1s -r 1s
	@$(PY) scripts/bench_loadgen.py
	@$(PY) scripts/bench_middleware.py

# memcaslap against direct memcached, twemproxy and the middleware (replication 1).
.PHONY: bench-middleware
bench-middleware: setup build
	@$(PY) scripts/bench_middleware.py

# Findings land in the tests' inputs under src/test/resources, which test-java replays.
FUZZ_SECONDS ?= 60
.PHONY: fuzz
fuzz:
	@scripts/fuzz.sh $(FUZZ_SECONDS)

clean:
	@rm -rf build results paper/build paper/report.pdf .snakemake
	@$(MVN) clean
