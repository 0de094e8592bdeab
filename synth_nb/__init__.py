"""synth-nb: launch and watch Synth post-training jobs (RL, SFT, prompt learning) from Jupyter.

``import synth_nb`` stays cheap: matplotlib, anywidget, ipywidgets, IPython and httpx load only when a
feature that needs them is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from synth_nb._version import __version__

if TYPE_CHECKING:
    from synth_nb.comparison import compare

__all__ = ["__version__", "compare", "load_ipython_extension", "unload_ipython_extension"]


def __getattr__(name: str) -> Any:
    """``synth_nb.compare`` is imported on first use (it brings the client, pipeline and job layers)."""
    if name == "compare":
        from synth_nb.comparison import compare

        return compare
    raise AttributeError(f"module 'synth_nb' has no attribute {name!r}")


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext synth_nb``: register ``%synth_train`` / ``%%synth_train``."""
    from synth_nb.notebook.magics import load_ipython_extension as _load

    _load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    from synth_nb.notebook.magics import unload_ipython_extension as _unload

    _unload(ipython)
