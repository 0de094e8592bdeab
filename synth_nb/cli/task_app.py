"""``synth-nb task-app banking|charclass``: serve a bundled example task app on 127.0.0.1 until Ctrl-C.

The task app checks ``X-API-Key`` against ``--api-key``, else ENVIRONMENT_API_KEY, else a fresh random key;
only its masked form is printed unless ``--print-key`` is given. Needs the ``local`` extra.
"""

from __future__ import annotations

import argparse
import os
import secrets
import sys

from synth_nb.cli._serve import serve_until_stopped
from synth_nb.pipeline import bundled_apps
from synth_nb.secrets import mask

__all__ = ["configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", choices=bundled_apps.NAMES, help="Which example task app to serve.")
    parser.add_argument("--port", type=int, default=8102, help="Port on 127.0.0.1 (0 = any free port). Default 8102.")
    parser.add_argument("--api-key", default=None,
                        help="Key callers must send as X-API-Key (default: ENVIRONMENT_API_KEY, else a new one).")
    parser.add_argument("--print-key", action="store_true", help="Print the full key (it is masked otherwise).")


def run(args: argparse.Namespace) -> int:
    try:
        from synth_nb.local.examples import start_task_app
    except ImportError as exc:  # pragma: no cover - depends on installed extras
        print(f"error: example task apps need the 'local' extra (pip install 'synth-nb[local]'): {exc}",
              file=sys.stderr)
        return 2
    if args.api_key:
        key, source = args.api_key, "--api-key"
    elif os.environ.get("ENVIRONMENT_API_KEY"):
        key, source = os.environ["ENVIRONMENT_API_KEY"], "ENVIRONMENT_API_KEY"
    else:
        key, source = f"sk_env_{secrets.token_hex(16)}", "generated; rerun with --print-key to see it"
    try:
        handle = start_task_app(args.name, port=args.port, api_key=key)
    except (OSError, RuntimeError) as exc:
        print(f"error: cannot serve on 127.0.0.1:{args.port}: {exc} (try --port 0)", file=sys.stderr)
        return 2
    return serve_until_stopped([
        f"synth-nb example task app '{args.name}' on {handle.url}",
        f"X-API-Key: {key if args.print_key else mask(key)}  ({source})",
        f"Use it: {bundled_apps.usage(args.name, handle.url)} (or --task-url {handle.url})",
    ], handle.stop)
