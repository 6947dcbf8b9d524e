# Two entry points: `make demo` runs the main job, `make test` runs the test suite.
# Both create .venv with Python 3 if it is missing and install medmtl with its extras.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test install clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade pip

$(STAMP): $(BIN)/python setup.cfg pyproject.toml
	$(BIN)/python -m pip install -e ".[all]"
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	MPLBACKEND=Agg $(BIN)/python -m medmtl.experiments.demo --out results

test: $(STAMP)
	MPLBACKEND=Agg $(BIN)/python -m pytest -n 2 -q

clean:
	rm -rf $(VENV) results .medmtl_cache
