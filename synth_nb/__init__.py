"""synth-nb: launch and watch Synth post-training jobs (RL, SFT, prompt learning) from Jupyter.

``import synth_nb`` stays cheap: matplotlib, anywidget, ipywidgets, IPython and httpx load only when a
feature that needs them is used.
"""

from __future__ import annotations

from typing import Any

from synth_nb._version import __version__

__all__ = ["__version__", "load_ipython_extension", "unload_ipython_extension"]


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext synth_nb``: register ``%synth_train`` / ``%%synth_train``."""
    from synth_nb.notebook.magics import load_ipython_extension as _load

    _load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    from synth_nb.notebook.magics import unload_ipython_extension as _unload

    _unload(ipython)
