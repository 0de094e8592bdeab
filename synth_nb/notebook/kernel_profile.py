"""The IPython kernel config block that loads ``synth_nb`` in every new kernel.

IPython kernels read their configuration from the IPython profile (``~/.ipython/profile_default``,
``{sys.prefix}/etc/ipython``, ``/etc/ipython``), never from the Jupyter config path, so files installed
under ``etc/jupyter`` cannot load a kernel extension. The block is appended to the profile's
``ipython_kernel_config.py`` (one file per profile, shared with the user's own settings, so it is edited
in place rather than replaced) and can be removed again. Used by ``synth-nb enable``.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["BEGIN", "END", "disable", "enable", "kernel_config_path"]

BEGIN = "# >>> synth-nb: load the %synth_train magic in every kernel (synth-nb enable --disable removes) >>>"
END = "# <<< synth-nb <<<"
BLOCK = f"""{BEGIN}
c = get_config()  # noqa: F821
c.InteractiveShellApp.extensions.append("synth_nb")
{END}
"""


def kernel_config_path(profile: str = "default", ipython_dir: str | Path | None = None) -> Path:
    if ipython_dir is None:
        from IPython.paths import get_ipython_dir

        ipython_dir = get_ipython_dir()
    return Path(ipython_dir).expanduser() / f"profile_{profile}" / "ipython_kernel_config.py"


def _without_block(text: str) -> str:
    start = text.find(BEGIN)
    if start < 0:
        return text
    end = text.find(END, start)
    end = len(text) if end < 0 else end + len(END)
    return (text[:start].rstrip("\n") + "\n" + text[end:].lstrip("\n")).lstrip("\n")


def enable(path: Path) -> bool:
    """Add the block (idempotent). Returns False if it was already there."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if BEGIN in text:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    prefix = text.rstrip("\n") + "\n\n" if text.strip() else ""
    path.write_text(prefix + BLOCK, encoding="utf-8")
    return True


def disable(path: Path) -> bool:
    """Remove the block, keeping everything else. Returns False if it was not there."""
    if not path.exists():
        return False
    text = path.read_text(encoding="utf-8")
    if BEGIN not in text:
        return False
    path.write_text(_without_block(text), encoding="utf-8")
    return True
