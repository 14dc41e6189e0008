# Two commands for a fresh machine with Python 3.10+:  make lab   and   make test
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin

.PHONY: lab lab-zh app test install install-app install-dev bench lint clean

$(BIN)/python:
	$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 10), "agentloops needs Python 3.10 or newer"'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-dev: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[dev,record,app,browser,frameworks]'
	touch $(VENV)/.installed $(VENV)/.installed-app $@

$(VENV)/.installed-app: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[app]'
	touch $(VENV)/.installed $@

install: $(VENV)/.installed
install-app: $(VENV)/.installed-app
install-dev: $(VENV)/.installed-dev

## make lab: install, then open the notebooks in JupyterLab;  make lab-zh: the Chinese edition
lab: install
	$(BIN)/agentloops lab

lab-zh: install
	$(BIN)/agentloops lab --lang zh

## make app [PAGE=controller]: serve an explorer as a page with no code shown, for projecting in a room
app: install-app
	$(BIN)/agentloops app $(PAGE)

## make test: install with test tools, then run every test (notebooks included)
test: install-dev
	$(BIN)/python -m pytest -n auto

bench: install-dev
	for script in benchmarks/bench_*.py; do echo "== $$script"; $(BIN)/python $$script || exit 1; done

lint: install-dev
	$(BIN)/python -m ruff check agentloops tests benchmarks
	$(BIN)/python -m mypy agentloops

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache
