"""``synth-nb backend``: run, start, inspect or stop the embedded local backend of a data folder.

Without an action it serves in the foreground until Ctrl-C. ``--start`` starts it in the background (as
``--backend local`` does on first use) unless it already runs; ``--status`` says where it runs, since when
and its jobs (exit 0 running, 1 not); ``--stop`` stops it; ``--task-app-url NAME`` prints where it serves
a bundled example task app (starting it if needed), for ``--task-url "$(synth-nb backend --task-app-url
banking)"``. The data folder is ``--data-dir``, else ``SYNTH_NB_BACKEND_DIR``, else ``.synth_nb/backend``.

The API key is ``--api-key``, else the one saved in ``<data-dir>/api_key`` by an earlier run, else a new
one written there (mode 0600). Only its masked form is printed unless ``--print-key`` is given. A backend
with a ``--api-key`` of its own is not shared: kernels could not find its key.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from synth_nb.cli._serve import serve_until_stopped
from synth_nb.local.examples import TASK_APPS, task_app_path
from synth_nb.local.lifecycle import mask_secret, replay_speed_problem  # not synth_nb.secrets: no pydantic

__all__ = ["configure", "main", "run"]

#: the bundled example task apps the backend serves (the examples package's own list)
EXAMPLES = tuple(TASK_APPS)


def configure(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_mutually_exclusive_group()
    actions.add_argument("--start", action="store_true", help="Start it in the background unless it runs already.")
    actions.add_argument("--status", action="store_true", help="Say whether it runs (exit 0) or not (exit 1).")
    actions.add_argument("--stop", action="store_true", help="Stop the background backend of the data folder.")
    actions.add_argument("--task-app-url", choices=EXAMPLES, default=None, metavar="NAME",
                         help=f"Print the URL of a bundled example task app it serves ({', '.join(EXAMPLES)}).")
    parser.add_argument("--port", type=int, default=8000, help="Port on 127.0.0.1 (0 = any free port). Default 8000.")
    parser.add_argument("--data-dir", type=Path, default=None,
                        help="Folder for the database and uploads (default: SYNTH_NB_BACKEND_DIR, else "
                             ".synth_nb/backend).")
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


def _data_dir(args: argparse.Namespace) -> Path:
    from synth_nb.local.shared import default_data_dir

    return args.data_dir.expanduser().resolve() if args.data_dir is not None else default_data_dir()


def run(args: argparse.Namespace) -> int:
    speed_problem = replay_speed_problem(args.replay_speed) if args.replay_speed is not None else None
    if speed_problem:
        print(f"error: --replay-speed {speed_problem}", file=sys.stderr)
        return 2
    from synth_nb.local.errors import DataFolderError, SharedBackendError

    data_dir = _data_dir(args)
    try:
        if args.status:
            return _status(data_dir)
        if args.stop:
            return _stop(data_dir)
        if args.start or args.task_app_url:
            return _start(data_dir, args)
        return _serve(data_dir, args)
    except DataFolderError as exc:  # the user's to fix: a usage error
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except SharedBackendError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


def _uptime(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes}m" if hours else f"{minutes}m {secs}s"


def _status(data_dir: Path) -> int:
    from synth_nb.local.shared import describe_backend, find_backend

    backend = find_backend(data_dir)
    if backend is None:
        print(f"no embedded backend is running for {data_dir}")
        return 1
    _, about = describe_backend(backend.url, backend.api_key, jobs=True)
    counts = about.get("jobs")
    jobs = ", ".join(f"{n} {status}" for status, n in counts.items()) if isinstance(counts, dict) else ""
    version = f", synth-nb {backend.info.version}" if backend.info.version else ""
    print(f"embedded backend on {backend.url}  (pid {backend.pid}, up {_uptime(backend.info.uptime_seconds)}"
          f"{version})")
    print(f"data folder: {data_dir}")
    print(f"jobs: {jobs or 'none yet'}")
    print("example task apps: " + ", ".join(backend.task_app_url(name) for name in EXAMPLES))
    print("\n".join(synth_ai_lines(backend.url, data_dir)))
    return 0


def synth_ai_lines(url: str, data_dir: Path) -> list[str]:
    """What to paste to run synth-ai's own ``synth-ai train`` against this backend, per release family
    (the keys as ``$(cat FILE)`` of the data folder, never their values)."""
    from synth_nb.local.key_files import API_KEY_FILE, TASK_APP_KEY_FILE

    def read(name: str) -> str:
        return f'"$(cat {shlex.quote(str(data_dir / name))})"'

    apps = {name: url + task_app_path(name) for name in EXAMPLES}
    return [
        "",
        "synth-ai train against it (README: Use it from synth-ai); paste, for every release:",
        f"  export SYNTH_API_KEY={read(API_KEY_FILE)}",
        f"  export ENVIRONMENT_API_KEY={read(TASK_APP_KEY_FILE)}   # the example task apps' key",
        "then the backend, for synth-ai 0.2.x:",
        f"  export SYNTH_BACKEND_OVERRIDE={url}",
        "or for synth-ai 0.3.0 to 0.5.0 (the last with train; 0.4.x also needs: pip install 'mcp<2'):",
        f"  export BACKEND_BASE_URL={url}",
        "and run a bundled config from its folder, with the task app this backend serves:",
        f"  synth-ai train banking_gepa.toml --task-url {apps['banking']}   # MIPRO: up to 0.4.11",
        f"  synth-ai train rl_tiny.toml --task-url {apps['charclass']}",
        "  synth-ai train sft_tiny.toml",
        "(0.3.0 and later refuse provider = \"openai\" configs without OPENAI_API_KEY set: any value, never sent)",
    ]


def _stop(data_dir: Path) -> int:
    from synth_nb.local.shared import stop_backend

    stopped = stop_backend(data_dir)
    if stopped is None:
        print(f"no embedded backend is running for {data_dir}")
        return 1
    print(f"stopped the embedded backend on {stopped.url} (pid {stopped.pid}, data in {data_dir})")
    return 0


def _start(data_dir: Path, args: argparse.Namespace) -> int:
    from synth_nb.local.shared import ensure_backend

    backend = ensure_backend(data_dir, options=_server_options(args))
    if args.task_app_url:
        print(backend.task_app_url(args.task_app_url))
        return 0
    said = "started" if backend.started else "already running"
    print(f"embedded backend on {backend.url} ({said}; pid {backend.pid}, data in {data_dir})")
    print("stop it with: synth-nb backend --stop" + (f" --data-dir {data_dir}" if args.data_dir else ""))
    return 0


def _server_options(args: argparse.Namespace) -> tuple[str, ...]:
    """The serving flags a background start passes on to the process it starts."""
    options: list[str] = []
    if args.default_executor:
        options += ["--default-executor", args.default_executor]
    if args.replay_speed is not None:
        options += ["--replay-speed", str(args.replay_speed)]
    if args.recordings_dir is not None:
        options += ["--recordings-dir", str(args.recordings_dir.expanduser().resolve())]
    return tuple(options)


def _serve(data_dir: Path, args: argparse.Namespace) -> int:
    """Serve in the foreground; the info file lets kernels and commands share it (unless ``--api-key``)."""
    try:
        from synth_nb.local.backend_info import remove_info, write_info
        from synth_nb.local.key_files import API_KEY_FILE, TASK_APP_KEY_FILE, ensure_key
        from synth_nb.local.serve import start_backend
    except ImportError as exc:
        print(f"error: the local backend needs the 'local' extra (pip install 'synth-nb[local]'): {exc}",
              file=sys.stderr)
        return 2
    from synth_nb._version import __version__
    from synth_nb.local.errors import DataFolderError

    try:
        if args.api_key:
            key, source = args.api_key, "--api-key"
        else:
            key, new = ensure_key(data_dir, API_KEY_FILE)
            source = f"{data_dir / API_KEY_FILE}" + (" (new)" if new else "")
        task_app_key, _ = ensure_key(data_dir, TASK_APP_KEY_FILE)
    except OSError as exc:
        raise DataFolderError.of(data_dir, exc) from None
    options = {"replay": {"speed": args.replay_speed}} if args.replay_speed else None
    try:
        backend = start_backend(port=args.port, data_dir=data_dir, api_key=key, task_app_key=task_app_key,
                                default_executor=args.default_executor, executor_options=options,
                                recordings_dir=args.recordings_dir)
    except OSError as exc:
        print(f"error: cannot listen on 127.0.0.1:{args.port}: {exc.strerror or exc} (try --port 0)",
              file=sys.stderr)
        return 2
    except RuntimeError as exc:  # the data dir is in use by another server
        print(f"error: {exc}", file=sys.stderr)
        return 2
    info = None if args.api_key else write_info(backend.url, data_dir, __version__)

    def _stop_serving() -> None:
        print("stopping…", flush=True)
        if info is not None:
            remove_info(data_dir, info.pid)
        backend.stop()

    folder_id = _identity(data_dir)

    def _folder_gone() -> str | None:
        """A backend whose data folder was deleted (or replaced) would run on forever, serving nothing."""
        if _identity(data_dir) != folder_id:
            return f"the data folder {data_dir} was deleted: stopping"
        return None

    shown = key if args.print_key else mask_secret(key)
    key_hint = f"$(cat {data_dir / API_KEY_FILE})" if not args.api_key else "<your key>"
    return serve_until_stopped([
        f"synth-nb local backend on {backend.url}  (data: {data_dir})",
        f"API key: {shown}  (from {source})",
        f"Connect: export SYNTH_API_KEY={key_hint}",
        f"         synth-nb train --backend {backend.url}   (synth-ai train: BACKEND_BASE_URL={backend.url}, "
        "0.2.x: SYNTH_BACKEND_OVERRIDE; synth-nb backend --status says the rest)",
        "Example task apps: " + ", ".join(backend.task_app_url(name) for name in EXAMPLES),
    ], _stop_serving, gone=_folder_gone)


def _identity(folder: Path) -> tuple[int, int] | None:
    try:
        found = os.stat(folder)
    except OSError:
        return None
    return found.st_dev, found.st_ino


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m synth_nb.cli.backend``: this command alone, as the background backend process runs it
    (so it needs nothing of the other commands)."""
    parser = argparse.ArgumentParser(prog="synth-nb backend", description=__doc__.splitlines()[0])
    configure(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
