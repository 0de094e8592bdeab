"""The folder a notebook's relative paths mean: "next to the notebook", whatever the kernel's working directory.

A magic's request (``synth_nb.pipeline.request.Request``) is built with this folder as its anchor.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["notebook_folder"]


def notebook_folder(user_ns: Mapping[str, Any] | None = None, environ: Mapping[str, str] | None = None,
                    cwd: Path | None = None) -> Path:
    """The folder of the running notebook: ``__session__`` / ``JPY_SESSION_NAME`` if usable, else cwd.

    Jupyter server starts a kernel with ``JPY_SESSION_NAME`` = the notebook path (ipykernel copies it to
    ``__session__``) and with the notebook's folder as cwd; a path that no longer exists (renamed
    notebook) or that is not a file path falls back to the cwd.
    """
    cwd = cwd or Path.cwd()
    environ = os.environ if environ is None else environ
    candidates = [(user_ns or {}).get("__session__"), environ.get("JPY_SESSION_NAME")]
    for raw in candidates:
        if not raw or not isinstance(raw, str) or "://" in raw:
            continue
        path = Path(raw).expanduser()
        path = path if path.is_absolute() else cwd / path
        if path.suffix == ".ipynb" and path.parent.is_dir():
            return path.parent.resolve()
    return cwd.resolve()
