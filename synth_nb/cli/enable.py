"""``synth-nb enable``: make new IPython kernels load ``synth_nb`` without ``%load_ext``.

It appends a clearly marked block to the IPython profile's ``ipython_kernel_config.py``; ``--disable``
removes it (``synth_nb.notebook.kernel_profile`` says why a Jupyter config file cannot do this).
"""

from __future__ import annotations

import argparse

__all__ = ["configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--disable", action="store_true", help="Remove the block added by `synth-nb enable`.")
    parser.add_argument("--profile", default="default", help="IPython profile to configure (default: default).")
    parser.add_argument("--ipython-dir", default=None, metavar="PATH",
                        help="IPython directory (default: $IPYTHONDIR or ~/.ipython).")


def run(args: argparse.Namespace) -> int:
    from synth_nb.notebook.kernel_profile import disable, enable, kernel_config_path

    path = kernel_config_path(args.profile, args.ipython_dir)
    if args.disable:
        changed = disable(path)
        print(f"{'removed synth-nb from' if changed else 'synth-nb was not enabled in'} {path}")
    else:
        changed = enable(path)
        print(f"{'enabled synth-nb in' if changed else 'synth-nb is already enabled in'} {path}")
        print("New kernels load the extension: %synth_train is available without %load_ext.")
    return 0
