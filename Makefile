# Two entry points: `make demo` and `make test`. Everything else is a building block.
SHELL := /bin/bash
PY ?= python3
VENV := .venv
TOOLS := .ci-tools
UV := $(TOOLS)/bin/uv
export UV_CACHE_DIR ?= $(CURDIR)/.ci-cache/uv
# torch comes from pip's find-links folder when the machine has one (CPU build); uv ignores pip.conf
export UV_FIND_LINKS ?= $(PIP_FIND_LINKS)
export UV_HTTP_TIMEOUT ?= 180
export PYTHONUNBUFFERED := 1

.PHONY: demo test test-fast venv lint unit notebooks browser js-check compat bench clean

$(UV):
	$(PY) -m venv $(TOOLS)
	$(TOOLS)/bin/pip install -q uv

$(VENV)/.installed: pyproject.toml | $(UV)
	$(UV) venv -q --allow-existing --python "$$(command -v $(PY))" $(VENV)
	VIRTUAL_ENV=$(CURDIR)/$(VENV) $(UV) pip install -q -e ".[test,train,offline-policy]"
	touch $@

venv: $(VENV)/.installed

lint: venv
	$(VENV)/bin/ruff check synth_nb tests benchmarks example_notebooks
	$(VENV)/bin/mypy

unit: venv
	$(VENV)/bin/python -m pytest -q -p no:cacheprovider -n 3 --dist loadgroup -m "not browser and not notebook"

# the inner loop: everything but the browser journeys, the example notebooks and real (torch) training
test-fast: venv
	$(VENV)/bin/python -m pytest -q -p no:cacheprovider -n 3 --dist loadgroup -m "not browser and not notebook and not torch"

notebooks: venv
	$(VENV)/bin/python -m pytest -q -p no:cacheprovider -m notebook

browser: venv
	bash .ci/ensure-system-packages
	$(VENV)/bin/python -m pytest -q -p no:cacheprovider -m browser

# the committed bundle in synth_nb/static must be what js/ builds (esbuild is deterministic)
js-check:
	cd js && npm ci --no-audit --no-fund --loglevel=error && npm run -s build && npm test --silent
	git diff --exit-code -- synth_nb/static/

# compat: synth-ai 0.2.24's own CLI against the local backend (builds its venv once under .ci-cache/)
compat: venv
	$(VENV)/bin/python -m pytest -p no:cacheprovider -q -m compat tests/compat

# lint, js-check and every test (compat included) in one pass: see .ci/test-all
test: venv
	bash .ci/ensure-system-packages
	bash .ci/test-all

demo: venv
	$(VENV)/bin/python example_notebooks/run_demo.py --out demo-output

bench: venv
	for f in benchmarks/[!_]*.py; do echo "== $$f"; $(VENV)/bin/python $$f || exit 1; done

clean:
	rm -rf $(VENV) $(TOOLS) .ci-cache demo-output artifacts
