"""`make demo`: run the GEPA example notebook headless against the embedded local backend.

Starts the local backend and the bundled banking task app on 127.0.0.1, executes
``prompt_learning_gepa.ipynb`` through a real kernel (nbclient) with their URLs and keys in the kernel's
environment, saves the executed notebook, and checks that the Markdown summary and the chart PNG were
written. Every process it starts is stopped before it returns. Exit status 0 only if the job succeeded.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
NOTEBOOK = "prompt_learning_gepa.ipynb"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="demo-output", help="output folder (default: demo-output)")
    parser.add_argument("--notebook", default=NOTEBOOK, help="example notebook to run")
    parser.add_argument("--timeout", type=int, default=900, help="per-cell timeout in seconds")
    args = parser.parse_args(argv)

    import nbformat
    from nbclient import NotebookClient

    from synth_nb.local import start_backend
    from synth_nb.local.examples import start_task_app
    from synth_nb.secrets import mask

    out = Path(args.out).resolve()
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    source = HERE / args.notebook
    nb = nbformat.read(source, as_version=4)
    started = time.monotonic()

    with start_backend(data_dir=out / "backend-data") as backend, start_task_app("banking") as task_app:
        print(f"local backend  {backend.url}  (key {mask(backend.api_key)})")
        print(f"task app       {task_app.url}  (key {mask(task_app.api_key)})")
        env = {
            **os.environ,
            "SYNTH_BACKEND_OVERRIDE": backend.url,
            "SYNTH_API_KEY": backend.api_key,
            "ENVIRONMENT_API_KEY": task_app.api_key,
            "TASK_APP_URL": task_app.url,
            "SYNTH_NB_OUTPUT_DIR": str(out),
        }
        env.pop("MPLBACKEND", None)  # a forced Agg backend stops inline PNG output in the kernel
        client = NotebookClient(nb, timeout=args.timeout, kernel_name="python3",
                                resources={"metadata": {"path": str(HERE)}})
        try:
            client.execute(env=env)
        finally:
            executed = out / args.notebook
            nbformat.write(nb, executed)
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
