# `make demo`: set everything up, then run the main job. `make test`: set up, then run the tests.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: setup demo test fuzz bench clean

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	scripts/install-system-packages.sh
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev,bench]'
	touch $@

demo: setup
	$(BIN)/lift devices
	$(BIN)/lift explore examples/asum.py --device cpu --budget 3m --plot

test: setup
	scripts/install-system-packages.sh --test
	$(BIN)/python -m pytest

fuzz: setup
	scripts/install-system-packages.sh --test
	HYPOTHESIS_PROFILE=fuzz $(BIN)/python -m pytest -m hypothesis

bench: setup
	scripts/install-system-packages.sh --bench
	$(BIN)/pip install -q pyclblast || echo "pyclblast could not be built: the benchmarks skip CLBlast"
	$(BIN)/python -m benchmarks

clean:
	rm -rf $(VENV) lift-out .pytest_cache .hypothesis
