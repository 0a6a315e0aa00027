# rttlab: `make demo` and `make test` work on a fresh clone with only cargo and python3.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.deps-installed

.PHONY: demo cs244 shootout test lint test-rust test-python test-wheel host-deps fuzz bench microbench callgrind build clean

## Create the virtualenv and install the Python dependencies (once per pyproject change).
$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet "maturin>=1.8,<2" "numpy>=1.26" "pandas>=2.1" "pyarrow>=15" "matplotlib>=3.8" "tqdm>=4.66" "tomli-w>=1.0" "jinja2>=3.1" "dask[distributed]>=2024.1" "pytest>=8" "hypothesis>=6.100" "dpkt>=1.9" "nbclient>=0.10" "nbformat>=5.10" "ipykernel>=6.29" "ruff~=0.17.6" "pytest-rerunfailures>=14" "pytest-xdist>=3.5"
	touch $(STAMP)

## Build the Rust core and install the rttlab package into the virtualenv, in the wheel's own
## profile (`dist`: release code, stripped), so that the wheel check reuses this build.
build: $(STAMP)
	$(BIN)/maturin develop --profile dist --quiet --extras test

## The headline reproduction: TIMELY's Table 1 and small-scale figures as an HTML report.
demo: build
	$(BIN)/rttlab reproduce timely --out results/timely --force

## The CS244 reproductions of TIMELY and HPCC on in-band telemetry, full length.
cs244: build
	$(BIN)/rttlab reproduce cs244 --out results/cs244 --force

## Every scheme on the k = 8 fat-tree (DCQCN, TIMELY, Patched TIMELY, DCTCP, Swift, HPCC).
shootout: build
	$(BIN)/rttlab reproduce shootout --out results/shootout --force

## The lint gate runs beside the build: each spends long stretches on one core (a crate's
## front end, the dependencies' installs), so together they keep both of CI's busy.
## The wheel's check (installs, mostly) then runs beside the Rust tests; BUILT=1 tells the
## targets after the first step that the build is done.
test: $(STAMP)
	$(MAKE) --no-print-directory -j2 --output-sync=target build lint
	$(MAKE) --no-print-directory -j2 --output-sync=target BUILT=1 test-rust test-wheel
	$(MAKE) --no-print-directory BUILT=1 test-python

## The lint gate: rustfmt, clippy and rustdoc (intra-doc links, docs/extending.md included)
## with every warning an error, and ruff on the Python.
PY_SOURCES := python tests examples bench
lint: $(STAMP)
	cargo fmt --all --check
	cargo clippy --workspace --all-targets --quiet -- -D warnings
	RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --document-private-items --quiet
	$(BIN)/ruff check --quiet $(PY_SOURCES)
	$(BIN)/ruff format --check --quiet $(PY_SOURCES)

## The real host's tools (Debian's clang, libbpf headers, bpftool, ethtool), installed when run
## as root and missing; without root its tests are skipped, each saying why.
HOST_PACKAGES := clang libbpf-dev bpftool ethtool iproute2
host-deps:
	@if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && ! (command -v clang && command -v bpftool && command -v ethtool && [ -e /usr/include/bpf/libbpf.h ]) >/dev/null 2>&1; then \
		echo "installing the real host's tools: $(HOST_PACKAGES)"; \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(HOST_PACKAGES) >/dev/null) \
			|| echo "warning: could not install $(HOST_PACKAGES); the real host's tests will be skipped"; \
	fi

test-rust:
	cargo test --profile test-build --workspace --exclude rttlab-py --exclude rttlab-microbench

## One worker per core, each test file on one worker (a file's fixtures run once; the real
## host's tests share namespaces and stay on one).
BUILD := $(if $(BUILT),,build)
test-python: $(BUILD) host-deps
	$(BIN)/pytest -q -n auto --dist loadfile

## The wheel installed into a fresh virtualenv, run from outside the repository.
test-wheel: $(BUILD)
	tests/wheel_check.sh

## Longer property tests than `make test` runs, from a random seed: generated scenarios in a
## debug build (integer overflow panics there), random faults on drawn fabrics and drawn
## fabrics on 1, 2 and 3 threads, then mutated TOML and command lines.
## RTTLAB_FUZZ_CASES, RTTLAB_FAULT_CASES and RTTLAB_THREAD_CASES set the counts, RTTLAB_FUZZ_SEED repeats a run.
fuzz: build
	RTTLAB_FUZZ_CASES=$${RTTLAB_FUZZ_CASES:-20000} cargo test -p rttlab-sim --test sim -- robust::
	RTTLAB_FAULT_CASES=$${RTTLAB_FAULT_CASES:-1000} RTTLAB_THREAD_CASES=$${RTTLAB_THREAD_CASES:-300} cargo test --profile test-build -p rttlab-sim --test sim -- faults::random_faults threads::drawn_fabrics
	RTTLAB_FUZZ_EXAMPLES=$${RTTLAB_FUZZ_EXAMPLES:-2000} $(BIN)/pytest -q tests/test_fuzz.py

## Speed: the benchmark suite (bench/suite.toml), medians of 3 runs checked against its targets,
## written to bench/results.json, the Python front end's overhead (bench/python_overhead.py) and a Python controller's cost (bench/python_controllers.py); `make microbench` runs the criterion micro-benchmarks.
## Every benchmark runs, and the command fails at the end if any target was missed.
bench: build
	cargo build --release --quiet -p rttlab-bench
	status=0; \
	./target/release/rttlab-bench suite bench/suite.toml --out bench/results.json || status=1; \
	$(BIN)/python bench/python_overhead.py || status=1; \
	$(BIN)/python bench/python_controllers.py || status=1; \
	exit $$status

microbench:
	cargo bench -p rttlab-microbench

## Instructions, events and last-level cache misses per data packet (valgrind's callgrind and
## cachegrind with one fixed cache), gated against bench/callgrind-counts.json: exits 1 on a count
## more than 2 % over its record (`--record` re-records, after a change that moves one for a reason).
callgrind:
	cargo build --release --quiet -p rttlab-bench
	python3 bench/callgrind.py

clean:
	rm -rf $(VENV) target
