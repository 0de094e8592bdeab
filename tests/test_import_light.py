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
