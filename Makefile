# Entry points of the study. Every target is idempotent.
#   make setup   install what is missing (Debian packages unless in `nix develop`, .venv) and check
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

# Both paths run the project venv, built from requirements.lock: Debian or, in `nix develop`, the
# flake supplies only the interpreter and the system tools, so Python versions are the same.
VENV_STAMP := .venv/.installed
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

# In `nix develop` the flake provides the system tools; elsewhere Debian's packages do.
ifdef IN_NIX_SHELL
setup: $(VENV_STAMP)
	@$(PY) -m mwlab tools --check >/dev/null && echo "setup: nix dev shell, tools and Python packages as pinned"
else
setup: debian-packages $(VENV_STAMP)
	@$(PY) -m mwlab tools --check >/dev/null

.PHONY: debian-packages
debian-packages:
	@scripts/setup-debian.sh

$(VENV_STAMP): | debian-packages
endif

ifneq ($(HOST_PYTHON_BASE),$(VENV_PYTHON_BASE))
$(VENV_STAMP): FORCE
endif

$(VENV_STAMP): pyproject.toml requirements.lock
	@export PATH='$(HOST_PATH)'; \
	want=$$(python3 -c 'import sys; print(sys.base_prefix)'); \
	have=$$(.venv/bin/python -c 'import sys; print(sys.base_prefix)' 2>/dev/null || true); \
	if [ "$$want" != "$$have" ]; then \
	  echo "setup: creating .venv on $$(command -v python3) ($$want)"; \
	  python3 -m venv --clear .venv; \
	fi
	@echo "setup: installing the pinned Python packages into .venv"
	@.venv/bin/pip install -q --disable-pip-version-check -c requirements.lock -e '.[dev]'
	@touch $@

.PHONY: FORCE
FORCE:

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
paper: setup
	@$(PY) -m mwlab paper --profile $(PROFILE) --cores $(CORES) $(if $(DATASET),--dataset $(DATASET))

measure: setup build
	@$(PY) -m mwlab measure --profile $(PROFILE) --cores $(CORES)

archive: setup
	@$(PY) -m mwlab dataset archive --profile $(PROFILE)

bench: setup build
	@$(PY) scripts/bench_budgets.py
	@$(PY) scripts/bench_loadgen.py
	@$(PY) scripts/bench_middleware.py

# SimpleMQ's middleware against clients of its PostgreSQL directly, in interleaved rounds.
bench-mq: setup build
	@$(PY) scripts/bench_mq.py

# memcaslap against direct memcached, twemproxy and the middleware (replication 1).
.PHONY: bench-middleware
bench-middleware: setup build
	@$(PY) scripts/bench_middleware.py

# Where the middleware's and twemproxy's CPU goes per operation under that load: perf, by thread,
# by kind of code and by symbol (PERF_ARGS: see scripts/profile_middleware.py --help).
.PHONY: profile-middleware
profile-middleware: setup build
	@$(PY) scripts/profile_middleware.py $(PERF_ARGS)

# Kills, restarts, SIGSTOPs and SIGCONTs memcached servers under load; one JSON line, exit 1 on a
# lost, out-of-order, late or falsely STORED reply (ports 25500-25599).
CHAOS_SECONDS ?= 120
.PHONY: chaos
chaos: setup build
	@$(PY) -m mwlab chaos --seconds $(CHAOS_SECONDS) $(if $(CHAOS_SEED),--seed $(CHAOS_SEED))

# Findings land in the tests' inputs under src/test/resources, which test-java replays.
FUZZ_SECONDS ?= 60
.PHONY: fuzz
fuzz:
	@scripts/fuzz.sh $(FUZZ_SECONDS)

clean:
	@rm -rf build results paper/build paper/report.pdf paper/supplement.pdf paper/tables .snakemake
	@$(MVN) clean
