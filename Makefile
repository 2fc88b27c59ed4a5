# Two commands do all set-up on a fresh machine (see README):
#   make book   — create .venv, execute every notebook with papermill (full mode), build _build/html
#   make test   — create .venv, install Chromium if missing, run the whole test suite
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: book test lab bench chromium clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[book,dev]"
	touch $@

book: $(STAMP)
	$(BIN)/python tools/build_book.py --mode full

test: $(STAMP) chromium
	$(BIN)/python -m pytest

# The browser tests drive Debian's Chromium (never a browser download).
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "installing Debian's chromium for the browser tests"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

lab: $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[book,dev,lab]"
	$(BIN)/jupyter lab book/

bench: $(STAMP)
	for script in benchmarks/*.py; do $(BIN)/python $$script || exit 1; done

clean:
	rm -rf _build
