# Two commands do all the set-up on a fresh machine: `make test` and `make book`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
# The CPU build of torch (a wheel on this machine's disk); an unpinned torch would pull a CUDA build.
TORCH  := torch==2.13.0
# Python writes the bytecode of what it imports (__pycache__, git-ignored), so that each later process (test
# workers, notebook kernels, subprocesses) reads it instead of compiling torch's and PyG's sources again (about
# 11 s per process that imports torch_geometric); a PYTHONDONTWRITEBYTECODE set in the shell would stop that.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: install test book book-smoke lab bench bench-sweep bench-precision bench-memory clean

install: $(STAMP)

# Every extra (pyg, studies, ray, reports, book) and the test tools, at the versions of constraints.txt.
# torch comes first, with pip: pip reads the machine's wheel folder, where the CPU build lies (uv does not look
# there); --no-compile skips byte-compiling torch's 17k files up front (Python compiles what it imports).
# uv then installs the rest: the same versions as pip, resolved and installed in parallel.
$(STAMP): pyproject.toml book/pyproject.toml constraints.txt Makefile
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --no-compile $(TORCH) uv
	$(BIN)/uv pip install -q --python $(BIN)/python -c constraints.txt -e '.[all,test,book]'
	# the book's side (claims, page tables, scorecard, plot style, the book runner): not in the wheel
	$(BIN)/uv pip install -q --python $(BIN)/python --no-deps -e book
	# MathJax for the offline book (copied into the built book's _static by book/hpstrat_book/build.py)
	npm install --silent --no-save --no-audit --no-fund --prefix $(VENV)/node mathjax@3
	touch $(STAMP)

# Two test workers (the machine's two cores); the tests that build the smoke book share one worker (xdist_group);
# the tests that start a local Ray cluster run after the others, alone (Ray's start-up has a fixed time limit).
test: $(STAMP)
	$(BIN)/python -m pytest -n 2 --dist loadgroup -m "not serial"
	$(BIN)/python -m pytest -m serial tests/experiments/test_distributed.py

# Re-executes only notebooks whose inputs changed; FORCE=1 re-executes everything from the data.
book: $(STAMP)
	$(BIN)/python -m hpstrat_book.build $(if $(FORCE),--force)

book-smoke: $(STAMP)
	$(BIN)/python -m hpstrat_book.build --profile smoke --workers 2 --preload

# JupyterLab in notebooks/ with the .venv's own python3 kernel (the one the notebooks name); it prints its URL.
lab: $(STAMP)
	$(BIN)/jupyter lab --notebook-dir=notebooks --no-browser $(if $(filter 0,$(shell id -u)),--allow-root)

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_split.py
	$(BIN)/python benchmarks/bench_train.py
	$(BIN)/python benchmarks/bench_spmm.py

# Projected k=4 sweep time with the current engine (about 15 min; appends to results/sweep_projection.csv).
bench-sweep: $(STAMP)
	$(BIN)/python benchmarks/bench_sweep.py --threads 2

bench-precision: $(STAMP)
	$(BIN)/python benchmarks/bench_precision.py

# Freed memory reused (train.reuse_freed_memory) against glibc's default, fresh processes (about 25 min).
bench-memory: $(STAMP)
	$(BIN)/python benchmarks/bench_memory.py --threads 2

clean:
	rm -rf _build .pytest_cache .hypothesis
