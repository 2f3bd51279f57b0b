# Fresh-machine entry points. Each target sets up its own virtual environment.
# Python 3.12 is required (Mesa >= 3.5); where pyenv is present, 3.12.1 is selected.
SHELL := /bin/bash
PY ?= $(shell if command -v pyenv >/dev/null 2>&1 && pyenv versions --bare 2>/dev/null | grep -qx '3.12.1'; then echo "env PYENV_VERSION=3.12.1 python3"; elif command -v python3.12 >/dev/null 2>&1; then echo python3.12; else echo python3; fi)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-pure test-slow lint bench bench-pure clean venv notebooks-strip

# the compiled serving pool and typed core are rebuilt (pip install -e) when their sources change
POOL_SOURCES := $(addprefix src/speedtrap/serving/,request.py replica_clock.py admission.py decode_rate.py pool.py) \
	src/speedtrap/models/_typed_core.pyx $(wildcard src/speedtrap/models/_core_*.pxi)

$(STAMP): pyproject.toml hatch_build.py $(POOL_SOURCES)
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -c 'import sys; assert sys.version_info >= (3, 12), "Python 3.12+ required, got " + sys.version'
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(BIN)/speedtrap demo

# The browser tests drive Debian's chromium: scripts/browser_for_tests.sh installs it when missing (as
# root, or with sudo), or prints why they will skip, which pytest gets as SPEEDTRAP_NO_BROWSER.
# The whole suite runs on the build installed (the serving pool compiled with mypyc where a C compiler
# was found at install: `speedtrap --version` says which), then the golden, pool, model and agent tests
# again on the pure-Python modules (test-pure), so that CI covers both builds.
test: $(STAMP)
	$(BIN)/ruff check src tests benchmarks experiments scripts hatch_build.py
	$(BIN)/ruff format --check src tests benchmarks experiments scripts hatch_build.py
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/speedtrap --version
	SPEEDTRAP_NO_BROWSER="$$(bash scripts/browser_for_tests.sh)" $(BIN)/python -m pytest -q --durations=25
	$(MAKE) --no-print-directory test-pure

# The golden, pool, model and agent tests on the pure-Python modules (SPEEDTRAP_PURE=1 leaves the
# compiled ones unused). Where the installed build is already pure Python (no C compiler at install),
# the whole suite ran on it and there is no second build: this says so and runs nothing.
PURE_TESTS := tests/models tests/serving tests/agents tests/test_build.py tests/cli/test_cli_provenance.py
test-pure: $(STAMP)
	@if $(BIN)/speedtrap --version | grep -q '(pure Python'; then \
	  echo "test-pure: the installed build is pure Python (no compiled serving pool): nothing more to run"; \
	else \
	  SPEEDTRAP_PURE=1 $(BIN)/speedtrap --version && \
	  SPEEDTRAP_PURE=1 $(BIN)/python -m pytest -q $(PURE_TESTS); \
	fi

test-slow: $(STAMP)
	$(BIN)/python -m pytest -q -m slow

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks experiments scripts hatch_build.py
	$(BIN)/ruff format --check src tests benchmarks experiments scripts hatch_build.py
	$(BIN)/mypy
	$(BIN)/lint-imports

bench: $(STAMP)
	$(BIN)/speedtrap --version
	$(BIN)/python benchmarks/bench_pool.py
	$(BIN)/python benchmarks/bench_workflow.py
	$(BIN)/python benchmarks/bench_cli.py

# the pool and workflow benchmarks on the pure-Python modules (the memory runs and the command-line
# timings are make bench's only)
bench-pure: $(STAMP)
	SPEEDTRAP_PURE=1 $(BIN)/speedtrap --version
	SPEEDTRAP_PURE=1 $(BIN)/python benchmarks/bench_pool.py
	SPEEDTRAP_PURE=1 $(BIN)/python benchmarks/bench_workflow.py --memory-days

notebooks-strip: $(STAMP)
	$(BIN)/python notebooks/strip.py

clean:
	rm -rf $(VENV) results .pytest_cache
	rm -f src/speedtrap/serving/*.so src/*.so src/speedtrap/serving/compiled_sources.sha256
	rm -f src/speedtrap/models/*.so src/speedtrap/models/typed_core_source.sha256
