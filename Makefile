# Everything the project needs is installed from here, never by hand.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test lint bench clean

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

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
