"""``synth-nb backend``: run the embedded local backend on 127.0.0.1 until Ctrl-C.

The API key is ``--api-key``, else the one saved in ``<data-dir>/api_key`` by an earlier run, else a new
one written there (mode 0600). Only its masked form is printed unless ``--print-key`` is given.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from synth_nb.cli._serve import serve_until_stopped
from synth_nb.secrets import mask

__all__ = ["configure", "run"]

DEFAULT_DATA_DIR = Path(".synth_nb") / "backend"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int, default=8000, help="Port on 127.0.0.1 (0 = any free port). Default 8000.")
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR,
                        help=f"Folder for the database and uploads (default {DEFAULT_DATA_DIR}).")
    parser.add_argument("--api-key", default=None,
                        help="Bearer key clients must send (default: saved/generated in <data-dir>/api_key).")
    parser.add_argument("--print-key", action="store_true", help="Print the full API key (it is masked otherwise).")
    parser.add_argument("--default-executor", choices=["replay"], default=None,
                        help="Run every job that names no executor with this one (replay: bundled recordings).")
    parser.add_argument("--replay-speed", type=float, default=None,
                        help="Default speed factor for replay jobs (e.g. 10 = ten times faster).")
    parser.add_argument("--recordings-dir", type=Path, default=None,
                        help="Folder whose recordings replay jobs may read, besides the bundled ones "
                             "(default <data-dir>/recordings).")


def _api_key(args: argparse.Namespace, data_dir: Path) -> tuple[str, str]:
    """The key and where it came from."""
    if args.api_key:
        return args.api_key, "--api-key"
    key_file = data_dir / "api_key"
    if key_file.is_file():
        saved = key_file.read_text(encoding="utf-8").strip()
        if saved:
            return saved, str(key_file)
    from synth_nb.local.serve import generate_api_key

    key = generate_api_key()
    data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(key + "\n")
    return key, f"{key_file} (new)"


def run(args: argparse.Namespace) -> int:
    try:
        from synth_nb.local.serve import start_backend
    except ImportError as exc:
        print(f"error: the local backend needs the 'local' extra (pip install 'synth-nb[local]'): {exc}",
              file=sys.stderr)
        return 2
    if args.replay_speed is not None and args.replay_speed <= 0:
        print("error: --replay-speed must be > 0", file=sys.stderr)
        return 2
    data_dir: Path = args.data_dir.expanduser().resolve()
    key, source = _api_key(args, data_dir)
    options = {"replay": {"speed": args.replay_speed}} if args.replay_speed else None
    try:
        backend = start_backend(port=args.port, data_dir=data_dir, api_key=key,
                                default_executor=args.default_executor, executor_options=options,
                                recordings_dir=args.recordings_dir)
    except OSError as exc:
        print(f"error: cannot listen on 127.0.0.1:{args.port}: {exc.strerror or exc} (try --port 0)",
              file=sys.stderr)
        return 2
    except RuntimeError as exc:  # the data dir is in use by another server
        print(f"error: {exc}", file=sys.stderr)
        return 2
    shown = key if args.print_key else mask(key)
    key_hint = f"$(cat {data_dir / 'api_key'})" if source != "--api-key" else "<your key>"

    def _stop() -> None:
        print("stopping…", flush=True)
        backend.stop()

    return serve_until_stopped([
        f"synth-nb local backend on {backend.url}  (data: {data_dir})",
        f"API key: {shown}  (from {source})",
        f"Connect: export SYNTH_API_KEY={key_hint}",
        f"         synth-nb train --backend {backend.url}   (or SYNTH_BACKEND_OVERRIDE={backend.url} synth-ai train)",
    ], _stop)
