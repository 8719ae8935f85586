# Everything the project needs is installed from here, never by hand.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test lint bench sandbox-tools clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

## run: the whole catalog against the reference, with the report
run: $(STAMP)
	$(BIN)/harness run

## test: every test of the harness, and the catalog through pytest
test: $(STAMP)
	$(BIN)/harness lint
	$(BIN)/python -m pytest -q

## lint: validate every scenario file
lint: $(STAMP)
	$(BIN)/harness lint

## bench: the whole catalog in-process and through cmd:, their ratio and the per-call overhead
bench: $(STAMP)
	$(BIN)/python -m harness.bench

## sandbox-tools: bubblewrap, for --sandbox (Debian/Ubuntu; needs root)
sandbox-tools:
	command -v bwrap >/dev/null || { apt-get update -qq && apt-get install -y -qq bubblewrap; }

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
