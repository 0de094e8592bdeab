"""Is anything going to render a widget? Decides between the wizard and the text fallback.

A kernel started by a Jupyter server (JupyterLab, Notebook 7) gets ``JPY_SESSION_NAME``; VS Code sets
``VSCODE_PID``; Colab has ``google.colab``. nbclient / papermill / nbconvert start kernels directly and
a terminal IPython has no comm layer, so those count as headless. ``SYNTH_NB_WIDGETS=1|0`` overrides.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Any

__all__ = ["has_widget_frontend"]


def has_widget_frontend(shell: Any = None, environ: Mapping[str, str] | None = None) -> bool:
    environ = os.environ if environ is None else environ
    forced = environ.get("SYNTH_NB_WIDGETS", "").strip().lower()
    if forced in {"1", "true", "yes", "on"}:
        return True
    if forced in {"0", "false", "no", "off"}:
        return False
    if shell is None or getattr(shell, "kernel", None) is None:
        return False  # terminal IPython, plain Python
    return bool(environ.get("JPY_SESSION_NAME") or environ.get("VSCODE_PID") or "google.colab" in sys.modules)
