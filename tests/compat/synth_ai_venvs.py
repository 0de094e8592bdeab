"""The venvs of the synth-ai releases the compat tests drive, each built once under ``.ci-cache/synth-ai-<version>``.

A release's venv is ``$SYNTH_AI_<VERSION>_VENV`` (dots as underscores: ``SYNTH_AI_0_5_0_VENV``; for
0.2.24 also ``SYNTH_AI_024_VENV``) when set. Builds take a file lock, so whichever xdist worker comes first
builds it and the others wait. 0.4.x releases do not start with today's ``mcp`` 2.x: ``mcp<2`` is pinned
beside them.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

__all__ = ["REPO", "synth_ai_cli"]

REPO = Path(__file__).resolve().parents[2]
#: what each release needs installed beside it to start
_BESIDE = {"0.4.11": ["mcp<2"], "0.4.12": ["mcp<2"]}
_LEGACY_VARIABLES = {"0.2.24": "SYNTH_AI_024_VENV"}


def synth_ai_cli(version: str) -> Path:
    """The ``synth-ai`` command of ``version``'s venv, built first if needed."""
    given = os.environ.get(f"SYNTH_AI_{version.replace('.', '_')}_VENV") or os.environ.get(
        _LEGACY_VARIABLES.get(version, ""), "")
    venv = Path(given) if given else REPO / ".ci-cache" / f"synth-ai-{version}"
    cli = venv / "bin" / "synth-ai"
    venv.parent.mkdir(parents=True, exist_ok=True)
    with (venv.parent / f"synth-ai-{version}.lock").open("w") as lock:  # one builder, whichever worker is first
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not cli.exists():
            _build(venv, [f"synth-ai=={version}", *_BESIDE.get(version, [])])
    return cli


def _build(venv: Path, requirements: list[str]) -> None:
    uv = REPO / ".ci-tools" / "bin" / "uv"  # make's own uv: resolves and installs several times faster than pip
    if uv.exists():
        subprocess.run([str(uv), "venv", "-q", "--allow-existing", "--python", sys.executable, str(venv)], check=True)
        subprocess.run([str(uv), "pip", "install", "-q", "--python", str(venv / "bin" / "python"), *requirements],
                       check=True)
    else:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", *requirements], check=True)
