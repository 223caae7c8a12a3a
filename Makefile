# Entry points of the study. Every target is idempotent.
#   make setup   install what is missing (Debian packages unless in `nix develop`, .venv with the
#                test extra) and check; `make paper` and `make measure` install only their part
#   make lock    requirements.lock and requirements-test.lock, hashed, from pyproject.toml
#   make build   build/middleware.jar, build/loadgen.jar, build/benchmarks.jar, build/simplemq.jar
#   make test    Java, Python, flake (check-nix) and workflow test suites (the workflow
#                measures the smoke profile afresh into a cleared results/smoke)
#   make paper   paper/report.pdf and paper/supplement.pdf from the newest reference dataset
#                (data/), in minutes; from results/PROFILE instead once `make measure` completed
#                it (DATASET=dir to choose)
#   make measure measure PROFILE (default: default) into results/PROFILE; resumes after a kill
#   make archive archive the measurement of PROFILE as data/PROFILE/<today>/ (a piece: partial)
#   make bench   JMH against its budgets, loadgen vs memcaslap, middleware vs memcached and twemproxy
#   make bench-mq SimpleMQ's middleware vs its database (PostgreSQL), small and large messages
#   make profile-middleware  perf profile of the middleware and twemproxy under load (PERF_ARGS)
#   make chaos   soak the middleware while servers fail (CHAOS_SECONDS=120, CHAOS_SEED to replay)
#   make fuzz    each Jazzer fuzz test for FUZZ_SECONDS (default 60): executions, coverage

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

MVN ?= mvn -B -q -f middleware/pom.xml
PROFILE ?= default
CORES ?= 2

# Both paths run the project venv, built from the hashed requirements.lock: Debian or, in
# `nix develop`, the flake supplies only the interpreter and the system tools, so the Python
# packages are the same artifacts.
PY := .venv/bin/python
BIN := .venv/bin/
# python3 as the caller's PATH finds it (Debian's, or the flake's), and the venv's base interpreter:
# a venv made by the other path's interpreter is rebuilt. Evaluated before PATH gets .venv/bin.
HOST_PATH := $(subst $(CURDIR)/.venv/bin:,,$(PATH))
HOST_PYTHON_BASE := $(shell PATH='$(HOST_PATH)' python3 -c 'import sys; print(sys.base_prefix)' 2>/dev/null)
VENV_PYTHON_BASE := $(shell test -x $(PY) && $(PY) -c 'import sys; print(sys.base_prefix)' 2>/dev/null)
# Pipeline rules call python3, mwlab and snakemake; they must find the venv's.
export PATH := $(CURDIR)/.venv/bin:$(PATH)
# Prepended, never replacing: a PYTHONPATH set by the caller stays visible to every job.
ifeq ($(filter $(CURDIR),$(subst :, ,$(PYTHONPATH))),)
export PYTHONPATH := $(CURDIR)$(if $(PYTHONPATH),:$(PYTHONPATH))
endif

JAVA_SOURCES := $(shell find middleware -name '*.java' -o -name 'pom.xml' -o -path '*/src/main/resources/*' -type f 2>/dev/null)
JARS := build/middleware.jar build/loadgen.jar build/benchmarks.jar build/simplemq.jar

.PHONY: help setup build test test-java test-python test-workflow lint check-nix paper measure archive bench bench-mq clean

help:
	@sed -n 's/^#   //p' $(MAKEFILE_LIST)

# --- setup -------------------------------------------------------------------------------

# Each command installs what it needs and no more (scripts/debian-packages.tsv): `make paper`
# TeX, poppler and the runtime .venv; `make measure` and the benchmarks the systems, servers and
# load generators; `make setup` (and `make test`) everything, the test extra included. In
# `nix develop` the flake provides the system tools; elsewhere Debian's packages do.
RUNTIME_STAMP := .venv/.installed
TEST_STAMP := .venv/.installed-test

.PHONY: setup-paper setup-measure
ifdef IN_NIX_SHELL
setup: $(TEST_STAMP)
	@$(PY) -m mwlab tools --check >/dev/null && echo "setup: nix dev shell, tools and Python packages as pinned"
setup-paper setup-measure: setup-%: $(RUNTIME_STAMP)
	@$(PY) -m mwlab tools --check --for $* >/dev/null
else
setup: debian-packages-test $(TEST_STAMP)
	@$(PY) -m mwlab tools --check >/dev/null
setup-paper setup-measure: setup-%: debian-packages-% $(RUNTIME_STAMP)
	@$(PY) -m mwlab tools --check --for $* >/dev/null

DEBIAN_PACKAGES := debian-packages-paper debian-packages-measure debian-packages-test
.PHONY: $(DEBIAN_PACKAGES)
$(DEBIAN_PACKAGES): debian-packages-%:
	@scripts/setup-debian.sh $*

# python3 and python3-venv are in every command's packages, paper's the fewest.
$(RUNTIME_STAMP): | debian-packages-paper
endif

ifneq ($(HOST_PYTHON_BASE),$(VENV_PYTHON_BASE))
$(RUNTIME_STAMP): FORCE
endif

# Every artifact is checked against the lock's hashes; the project itself is installed
# (editable) by the lock's setuptools, with nothing else fetched.
PIP := .venv/bin/pip install -q --disable-pip-version-check
$(RUNTIME_STAMP): pyproject.toml requirements.lock
	@export PATH='$(HOST_PATH)'; \
	want=$$(python3 -c 'import sys; print(sys.base_prefix)'); \
	have=$$(.venv/bin/python -c 'import sys; print(sys.base_prefix)' 2>/dev/null || true); \
	if [ "$$want" != "$$have" ]; then \
	  echo "setup: creating .venv on $$(command -v python3) ($$want)"; \
	  python3 -m venv --clear .venv; \
	fi
	@echo "setup: installing the hashed Python pins of requirements.lock into .venv"
	@$(PIP) --require-hashes -r requirements.lock
	@$(PIP) --no-deps --no-build-isolation -e .
	@rm -f $(TEST_STAMP)
	@touch $@

$(TEST_STAMP): $(RUNTIME_STAMP) requirements-test.lock
	@echo "setup: installing the test extra (requirements-test.lock) into .venv"
	@$(PIP) --require-hashes -r requirements-test.lock
	@touch $@

.PHONY: FORCE
FORCE:

# requirements.lock and requirements-test.lock from pyproject.toml: every version of the
# closure with the hashes of all its artifacts, for every platform (--universal: the flake's
# aarch64 too), on the interpreter both paths run. The test lock is constrained by the runtime
# one, so the packages they share are the same. Versions already locked are kept unless
# pyproject.toml asks for others; UPGRADE=1 takes the newest that fit.
UV_VERSION := 0.13.9
LOCK_PYTHON := 3.11
UV := build/uv/bin/uv
LOCK_FLAGS := --universal --python-version $(LOCK_PYTHON) --generate-hashes --quiet \
  $(if $(UPGRADE),--upgrade)
.PHONY: lock
lock:
	@[ "$$($(UV) --version 2>/dev/null | cut -d' ' -f2)" = $(UV_VERSION) ] || \
	  { python3 -m venv --clear build/uv && build/uv/bin/pip install -q uv==$(UV_VERSION); }
	@$(UV) pip compile $(LOCK_FLAGS) pyproject.toml -o requirements.lock
	@$(UV) pip compile $(LOCK_FLAGS) pyproject.toml --extra test -c requirements.lock \
	  -o requirements-test.lock
	@echo "lock: requirements.lock ($$(grep -c '^[A-Za-z]' requirements.lock) packages)," \
	  "requirements-test.lock ($$(grep -c '^[A-Za-z]' requirements-test.lock))"

# --- build -------------------------------------------------------------------------------

build: $(JARS) build/nfdelay

# The link-delay process of emulated hosts (testbed/linkdelay.py), against libnetfilter_queue.
build/nfdelay: testbed/delay/nfdelay.c
	@echo "build: compiling nfdelay"
	@mkdir -p build
	@$(CC) -O2 -Wall -Wextra -std=c11 -o $@ $< $$(pkg-config --cflags --libs libnetfilter_queue)

$(JARS) &: $(JAVA_SOURCES)
	@echo "build: compiling the Java modules"
	@$(MVN) package -DskipTests
	@mkdir -p build
	@cp middleware/core/target/middleware.jar build/middleware.jar
	@cp middleware/loadgen/target/loadgen.jar build/loadgen.jar
	@cp middleware/jmh/target/benchmarks.jar build/benchmarks.jar
	@cp middleware/simplemq/target/simplemq.jar build/simplemq.jar

# --- tests -------------------------------------------------------------------------------

test: setup build
	@$(MAKE) --no-print-directory test-java lint check-nix test-python test-workflow
	@echo "test: all suites passed"

test-java:
	@echo "test: Java (JUnit 5)"
	@mvn -B --no-transfer-progress -Dstyle.color=never -f middleware/pom.xml test

lint:
	@echo "test: ruff"
	@$(BIN)ruff check .
	@$(BIN)ruff format --check .

# flake.nix evaluated offline against the nixpkgs attributes of nix/nixpkgs-allowlist.txt.
check-nix:
	@echo "test: flake.nix (offline evaluation)"
	@$(PY) nix/check.py

# A test that needs root, network namespaces or cgroups fails here where they are missing
# (tests/capabilities.py); run pytest directly to let such tests skip.
test-python:
	@echo "test: Python (pytest)"
	@MWLAB_REQUIRE_CAPABILITIES=1 $(PY) -m pytest -q
	@echo "test: the interoperability suite against batching workers"
	@$(PY) -m pytest -q tests/middleware/test_interop.py --mw-max-batch 16

# The smoke profile is measured in two pieces into one folder, as a long measurement is. The
# folder is cleared first, so that every run measures the code as it is: a folder measured by
# other code is refused by `mwlab measure`, and one measured by the same code plans nothing.
# Every step of test-workflow names it through SMOKE_RESULTS, read from the profile's study file
# (the one place that names the folder); it must lie under results/, as it is removed.
SMOKE_STUDY := workflows/profiles/smoke/study.yaml
SMOKE_RESULTS := $(shell sed -n 's/^results:[[:space:]]*//p' $(SMOKE_STUDY))
SMOKE_FIRST_PIECE = baseline_direct,baseline_middleware,batching_2018,write_throughput,multiget,factorial_2018
test-workflow:
	@echo "test: workflow (azure plan, then the smoke profile measured in two pieces into a fresh $(SMOKE_RESULTS), reported and archived)"
	@$(BIN)snakemake --profile azure --dry-run --quiet rules
	@[[ '$(SMOKE_RESULTS)' =~ ^results/[A-Za-z0-9_-][A-Za-z0-9._-]*$$ ]] || \
	  { echo "test: $(SMOKE_STUDY) names no folder under results/ ('$(SMOKE_RESULTS)')" >&2; exit 1; }
	@rm -rf $(SMOKE_RESULTS)
	@$(PY) -m mwlab measure --profile smoke --results $(SMOKE_RESULTS) --cores $(CORES) \
	  --progress-every 120 --families $(SMOKE_FIRST_PIECE)
	@$(PY) -m mwlab measure --profile smoke --results $(SMOKE_RESULTS) --cores $(CORES) \
	  --progress-every 120
	@$(BIN)snakemake $(SMOKE_RESULTS)/report.pdf --profile workflows/profiles/smoke \
	  --cores $(CORES) --config results=$(SMOKE_RESULTS)
	@test -s $(SMOKE_RESULTS)/report.pdf
	@$(PY) scripts/check_incremental.py smoke $(SMOKE_RESULTS)
	@MWLAB_REQUIRE_SMOKE_REPORT=1 MWLAB_SMOKE_RESULTS=$(SMOKE_RESULTS) $(PY) -m pytest -q \
	  tests/pipeline/test_report_numbers.py tests/pipeline/test_dataset_report.py
	@echo "test: workflow passed: $(SMOKE_RESULTS)/report.pdf"

# --- products ----------------------------------------------------------------------------

# The report needs no measurement: a reference dataset carries what the analysis reads.
paper: setup-paper
	@$(PY) -m mwlab paper --profile $(PROFILE) --cores $(CORES) $(if $(DATASET),--dataset $(DATASET))

# A measurement compared with the newest reference dataset should run the tools that measured
# it: each one that differs is named before measuring starts.
measure: setup-measure build
	@newest=$$($(PY) -m mwlab dataset latest --profile $(PROFILE) 2>/dev/null) || exit 0; \
	$(PY) -m mwlab tools --for measure --against "$$newest" >&2 || \
	  echo "measure: warning: the measured tools above differ from $$newest's" >&2
	@$(PY) -m mwlab measure --profile $(PROFILE) --cores $(CORES)

archive: setup-paper
	@$(PY) -m mwlab dataset archive --profile $(PROFILE)

bench: setup-measure build
	@$(PY) scripts/bench_budgets.py
	@$(PY) scripts/bench_loadgen.py
	@$(PY) scripts/bench_middleware.py

# SimpleMQ's middleware against clients of its PostgreSQL directly, in interleaved rounds.
bench-mq: setup-measure build
	@$(PY) scripts/bench_mq.py

# memcaslap against direct memcached, twemproxy and the middleware (replication 1).
.PHONY: bench-middleware
bench-middleware: setup-measure build
	@$(PY) scripts/bench_middleware.py

# Where the middleware's and twemproxy's CPU goes per operation under that load: perf, by thread,
# by kind of code and by symbol (PERF_ARGS: see scripts/profile_middleware.py --help).
.PHONY: profile-middleware
profile-middleware: setup-measure build
	@$(PY) scripts/profile_middleware.py $(PERF_ARGS)

# Kills, restarts, SIGSTOPs and SIGCONTs memcached servers under load; one JSON line, exit 1 on a
# lost, out-of-order, late or falsely STORED reply (ports 25500-25599).
CHAOS_SECONDS ?= 120
.PHONY: chaos
chaos: setup-measure build
	@$(PY) -m mwlab chaos --seconds $(CHAOS_SECONDS) $(if $(CHAOS_SEED),--seed $(CHAOS_SEED))

# Findings land in the tests' inputs under src/test/resources, which test-java replays.
FUZZ_SECONDS ?= 60
.PHONY: fuzz
fuzz:
	@scripts/fuzz.sh $(FUZZ_SECONDS)

clean:
	@rm -rf build results paper/build paper/report.pdf paper/supplement.pdf paper/tables .snakemake
	@$(MVN) clean
