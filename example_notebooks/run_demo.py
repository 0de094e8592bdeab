"""`make demo`: run the GEPA example notebook headless against the embedded local backend.

Executes ``prompt_learning_gepa.ipynb`` through a real kernel (nbclient) exactly as a person would run it:
the notebook uses the embedded backend (``--backend local``), which serves the bundled banking task app; no
key is given. The runner starts that backend's process beside the kernel (as the notebook would on its
first use, only earlier: both take about a second to start), and the notebook finds it running. The backend's data folder is
``<out>/backend-data`` (``SYNTH_NB_BACKEND_DIR``). Saves the executed notebook, checks that the Markdown
summary and the chart PNG were written, and stops the backend process before it returns. Everything is
written under ``<out>`` (the notebook runs in a copy of the examples there). Exit status 0 only if the job
succeeded.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
NOTEBOOK = "prompt_learning_gepa.ipynb"
#: the optional modules jsonschema's format checkers import (its ``format-nongpl`` extra), none used here
FORMAT_CHECKERS = ("rfc3987_syntax", "rfc3987", "rfc3339_validator", "rfc3986_validator", "isoduration",
                   "webcolors", "uri_template", "fqdn", "jsonpointer")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="demo-output", help="output folder (default: demo-output)")
    parser.add_argument("--notebook", default=NOTEBOOK, help="example notebook to run")
    parser.add_argument("--timeout", type=int, default=900, help="per-cell timeout in seconds")
    args = parser.parse_args(argv)

    # nbformat imports jsonschema, which imports every optional format checker installed (rfc3987_syntax builds
    # a grammar with lark as it is imported: over a second of CPU); this runner reads and writes one notebook
    # and checks no string format, so those modules are marked absent (jsonschema then skips their formats)
    for unused in FORMAT_CHECKERS:
        sys.modules.setdefault(unused, None)  # type: ignore[assignment]
    import nbformat
    from nbclient import NotebookClient
    from traitlets.config import Config

    from synth_nb.local.shared import DIR_VARIABLE, start_in_background, stop_backend

    out = Path(args.out).resolve()
    if out.exists():
        shutil.rmtree(out)
    # the notebook runs in a copy of the examples inside ``out``: what it writes (the job's results folder
    # next to its config) stays there, and the examples folder is left as it was
    shutil.copytree(HERE, out, ignore=shutil.ignore_patterns(".synth_nb", "results", "*.ipynb", "*.py",
                                                             "__pycache__", ".ipynb_checkpoints"))
    source = HERE / args.notebook
    nb = nbformat.read(source, as_version=4)
    started = time.monotonic()

    backend_dir = out / "backend-data"
    # the backend process starts now, beside the kernel (each takes about a second to start, and the
    # notebook's first cell waited for both in turn); the notebook finds it running, as it would find one
    # left by an earlier kernel
    start_in_background(backend_dir)
    # a forced Agg stops inline PNGs; a front end's variables (a terminal inside JupyterLab or VS Code) would ask
    # for widgets, which this kernel has no front end to show (the demo's install has none)
    withheld = ("SYNTH_BACKEND_OVERRIDE", "TASK_APP_URL", "SYNTH_API_KEY", "ENVIRONMENT_API_KEY", "MPLBACKEND",
                "SYNTH_NB_WIDGETS", "JPY_SESSION_NAME", "VSCODE_PID")
    env = {k: v for k, v in os.environ.items() if k not in withheld}
    env.update({DIR_VARIABLE: str(backend_dir), "SYNTH_NB_OUTPUT_DIR": str(out)})
    # the kernel talks over local sockets rather than TCP ports (which ipykernel rightly warns are
    # unencrypted); Windows has no such sockets
    sockets = tempfile.TemporaryDirectory(prefix="synth-nb-kernel-")
    config = Config()
    if os.name != "nt":
        config.KernelManager.transport = "ipc"
        config.KernelManager.ip = str(Path(sockets.name) / "kernel")
    # the kernel is stopped at once when the last cell has run (nothing is left for it to do; a graceful
    # shutdown waited for it to tidy up)
    client = NotebookClient(nb, config=config, timeout=args.timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(out)}}, shutdown_kernel="immediate")
    try:
        client.execute(env=env)
    finally:
        sockets.cleanup()
        executed = out / args.notebook
        nbformat.write(nb, executed)
        stopped = stop_backend(backend_dir)
        if stopped is not None:
            print(f"stopped the embedded backend on {stopped.url} (pid {stopped.pid})")
    elapsed = time.monotonic() - started

    summary = sorted(out.rglob("summary.md"))
    curves = sorted(p for p in out.rglob("*.png"))
    print(f"\nexecuted notebook  {executed}")
    for p in summary + curves:
        print(f"artifact           {p}")
    print(f"wall time          {elapsed:.1f} s")
    if not summary or not curves:
        print("error: the notebook did not write summary.md and the curve PNG", file=sys.stderr)
        return 1
    text = summary[0].read_text(encoding="utf-8")
    print("\n" + text.split("\n## Best prompt")[0])  # the job table and the scores
    return 0


if __name__ == "__main__":
    sys.exit(main())
