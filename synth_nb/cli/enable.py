"""``synth-nb enable``: make new IPython kernels load ``synth_nb`` without ``%load_ext``.

IPython kernels read their configuration from the IPython profile (``~/.ipython/profile_default``,
``{sys.prefix}/etc/ipython``, ``/etc/ipython``), never from the Jupyter config path, so files installed
under ``etc/jupyter`` cannot load a kernel extension. This command appends a clearly marked block to the
profile's ``ipython_kernel_config.py`` (one file per profile, shared with the user's own settings, so
it is edited in place rather than replaced); ``--disable`` removes the block again.
"""

from __future__ import annotations

import argparse
from pathlib import Path

__all__ = ["BEGIN", "END", "configure", "disable", "enable", "kernel_config_path", "run"]

BEGIN = "# >>> synth-nb: load the %synth_train magic in every kernel (synth-nb enable --disable removes) >>>"
END = "# <<< synth-nb <<<"
BLOCK = f"""{BEGIN}
c = get_config()  # noqa: F821
c.InteractiveShellApp.extensions.append("synth_nb")
{END}
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--disable", action="store_true", help="Remove the block added by `synth-nb enable`.")
    parser.add_argument("--profile", default="default", help="IPython profile to configure (default: default).")
    parser.add_argument("--ipython-dir", default=None, metavar="PATH",
                        help="IPython directory (default: $IPYTHONDIR or ~/.ipython).")


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


def run(args: argparse.Namespace) -> int:
    path = kernel_config_path(args.profile, args.ipython_dir)
    if args.disable:
        changed = disable(path)
        print(f"{'removed synth-nb from' if changed else 'synth-nb was not enabled in'} {path}")
    else:
        changed = enable(path)
        print(f"{'enabled synth-nb in' if changed else 'synth-nb is already enabled in'} {path}")
        print("New kernels load the extension: %synth_train is available without %load_ext.")
    return 0
