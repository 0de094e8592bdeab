"""``import synth_nb`` stays light: no matplotlib, anywidget, ipywidgets, IPython or httpx."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("matplotlib", "anywidget", "ipywidgets", "IPython", "httpx")


def test_import_synth_nb_does_not_load_heavy_modules() -> None:
    code = ("import json, sys, synth_nb; "
            f"print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert json.loads(out) == []


def test_the_backend_process_loads_no_policy_model_framework_nor_cli_extras() -> None:
    """What ``python -m synth_nb.cli.backend`` imports to serve: no pydantic (the secrets package), no
    httpx command line client (click's rich/pygments), no torch/transformers for the offline policy."""
    heavy = ("pydantic", "httpx._main", "rich", "pygments", "torch", "transformers", "sentence_transformers")
    code = ("import json, sys, synth_nb.cli.backend, synth_nb.local.serve, synth_nb.local.policies.embedding; "
            f"print(json.dumps(sorted(m for m in {heavy!r} if sys.modules.get(m) is not None)))")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert json.loads(out) == []
