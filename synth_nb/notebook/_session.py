"""Turn ``%synth_train`` arguments (or wizard choices) into plans and jobs, using only the library.

Nothing here parses configs, reads secrets or talks HTTP itself: it composes ``synth_nb.config``,
``synth_nb.secrets``, ``synth_nb.flows``, ``synth_nb.backend_target``, ``synth_nb.client`` and
``synth_nb.job``, and adds the two things a notebook needs on top: paths relative to the notebook's
folder, and one embedded local backend per kernel for ``--backend local``.
"""

from __future__ import annotations

import argparse
import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from synth_nb.errors import SynthNbError

__all__ = [
    "OVERRIDE_FIELDS",
    "Prepared",
    "TrainRequest",
    "local_backend",
    "notebook_folder",
    "overrides_from",
    "prepare",
    "secret_value",
    "stop_local_backend",
    "use_local_backend",
]

#: wizard/CLI override fields, in display order (``backend`` is chosen separately)
OVERRIDE_FIELDS = ("model", "dataset", "examples", "task_url", "idempotency", "allow_experimental")
LOCAL = "local"
API_KEY = "SYNTH_API_KEY"


def notebook_folder(user_ns: Mapping[str, Any] | None = None, environ: Mapping[str, str] | None = None,
                    cwd: Path | None = None) -> Path:
    """The folder of the running notebook: ``__session__`` / ``JPY_SESSION_NAME`` if usable, else cwd.

    Jupyter server starts a kernel with ``JPY_SESSION_NAME`` = the notebook path (ipykernel copies it to
    ``__session__``) and with the notebook's folder as cwd; a path that no longer exists (renamed
    notebook) or that is not a file path falls back to the cwd.
    """
    cwd = cwd or Path.cwd()
    environ = os.environ if environ is None else environ
    candidates = [(user_ns or {}).get("__session__"), environ.get("JPY_SESSION_NAME")]
    for raw in candidates:
        if not raw or not isinstance(raw, str) or "://" in raw:
            continue
        path = Path(raw).expanduser()
        path = path if path.is_absolute() else cwd / path
        if path.suffix == ".ipynb" and path.parent.is_dir():
            return path.parent.resolve()
    return cwd.resolve()


@dataclass
class TrainRequest:
    """The parsed train flags with every path made absolute against the notebook folder."""

    folder: Path
    configs: list[Path] = field(default_factory=list)
    env_files: list[Path] = field(default_factory=list)
    modal_secrets: list[str] = field(default_factory=list)
    backend: str | None = None
    overrides: dict[str, Any] = field(default_factory=dict)
    yes: bool = False
    wait: bool = False
    dry_run: bool = False
    json_output: bool = False
    poll: bool = True
    poll_interval: float = 5.0
    poll_timeout: float | None = None
    attach: str | None = None
    list_jobs: bool = False
    record: Path | None = None

    @classmethod
    def from_args(cls, args: argparse.Namespace, folder: Path) -> TrainRequest:
        def resolve(p: str | None) -> Path | None:
            return None if p is None else _resolve(folder, p)

        overrides = {name: getattr(args, name, None) for name in OVERRIDE_FIELDS}
        dataset = overrides.get("dataset")
        if dataset:
            overrides["dataset"] = str(_resolve(folder, str(dataset)))
        return cls(
            folder=folder,
            configs=[_resolve(folder, c) for c in args.configs or []],
            env_files=[_resolve(folder, e) for e in args.env_files or []],
            modal_secrets=list(args.modal_secrets or []),
            backend=args.backend,
            overrides={k: v for k, v in overrides.items() if v is not None},
            yes=bool(args.yes),
            wait=bool(args.wait),
            dry_run=bool(args.dry_run),
            json_output=bool(getattr(args, "json_output", False)),
            poll=bool(args.poll),
            poll_interval=float(args.poll_interval),
            poll_timeout=args.poll_timeout,
            attach=args.attach,
            list_jobs=bool(args.list_jobs),
            record=resolve(args.record),
        )


def _resolve(folder: Path, raw: str | Path) -> Path:
    path = Path(raw).expanduser()
    return path if path.is_absolute() else (folder / path)


def overrides_from(values: Mapping[str, Any], backend_url: str | None) -> Any:
    """Build ``synth_nb.flows.overrides.Overrides`` (a bad value raises ``OverrideError`` naming the flag)."""
    from synth_nb.flows.overrides import Overrides

    data = {k: v for k, v in values.items() if v is not None and v != ""}
    if backend_url:
        data["backend"] = backend_url
    return Overrides.build(**data)


def secret_value(item: Any) -> str | None:
    """The raw string of a ``SecretBundle.get`` result (a ResolvedSecret, a SecretStr or None)."""
    if item is None:
        return None
    value = getattr(item, "value", item)
    if isinstance(value, SecretStr):
        return value.get_secret_value() or None
    return str(value) or None


# --------------------------------------------------------------------------- local backend, one per kernel

_LOCAL_LOCK = threading.Lock()
_LOCAL: Any = None


def local_backend(api_key: str | None = None) -> Any:
    """Start the embedded backend on first use and reuse it for the life of the kernel."""
    global _LOCAL
    with _LOCAL_LOCK:
        if _LOCAL is None:
            from synth_nb.local import start_backend

            _LOCAL = start_backend(port=0, api_key=api_key)
        return _LOCAL


def use_local_backend(backend: Any) -> None:
    """Make an already running ``LocalBackend`` the one ``--backend local`` uses in this kernel.

    For backends started with options, e.g. ``start_backend(default_executor="replay")`` for demos.
    """
    global _LOCAL
    with _LOCAL_LOCK:
        _LOCAL = backend


def stop_local_backend() -> None:
    """Stop the kernel's embedded backend (used on extension unload and in tests)."""
    global _LOCAL
    with _LOCAL_LOCK:
        if _LOCAL is not None:
            _LOCAL.stop()
            _LOCAL = None


def backend_url(backend: str | None, environ: Mapping[str, str] | None = None) -> tuple[str, str | None]:
    """``(base URL ending in /api, api key of the local backend or None)`` for a ``--backend`` value."""
    environ = os.environ if environ is None else environ
    if backend == LOCAL:
        local = local_backend()  # its own key: the user's hosted key is never handed to it
        return local.url.rstrip("/") + "/api", local.api_key
    from synth_nb.backend_target import resolve_backend

    return resolve_backend(backend, environ), None


# --------------------------------------------------------------------------- config -> plan


@dataclass
class Prepared:
    """One config on its way to a job: every stage keeps what it found, the first failure stops it."""

    path: Path
    config: Any = None
    secrets: Any = None
    overrides: Any = None
    plan: Any = None
    error: SynthNbError | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.plan is not None


def prepare(path: Path, *, overrides: Mapping[str, Any], backend: tuple[str, str | None],
            env_files: Sequence[Path] = (), modal_secrets: Sequence[str] = (),
            pasted: Mapping[str, SecretStr] | None = None, environ: Mapping[str, str] | None = None,
            folder: Path | None = None) -> Prepared:
    """Load, resolve secrets and build the plan for one config; never raises a ``SynthNbError``."""
    from synth_nb.config import load_config
    from synth_nb.flows import plan_for
    from synth_nb.secrets import resolve_secrets

    out = Prepared(path=path)
    url, local_key = backend
    try:
        out.config = load_config(path)
        out.secrets = resolve_secrets(
            out.config.flow, config_path=path, env_files=tuple(env_files), modal_secrets=tuple(modal_secrets),
            environ=dict(os.environ if environ is None else environ), cwd=folder or path.parent,
            local_backend=bool(local_key),
        )
        if local_key:
            out.secrets = out.secrets.with_value(API_KEY, local_key, source="local backend")
        for name, value in (pasted or {}).items():
            out.secrets = out.secrets.with_value(name, value.get_secret_value(), source="pasted")
        out.overrides = overrides_from(overrides, url)
        out.secrets.require()
        out.plan = plan_for(out.config, out.overrides, out.secrets)
    except SynthNbError as exc:
        out.error = exc
    return out


def check_together(prepared: Sequence[Prepared]) -> None:
    """Overrides several jobs cannot share (one ``--idempotency`` key) raise ``OverrideError``."""
    ready = [p for p in prepared if p.overrides is not None and p.config is not None]
    if len(ready) > 1:
        from synth_nb.flows.overrides import check_multi_config

        check_multi_config(ready[0].overrides, [p.config.flow for p in ready])


def api_key_for(prepared: Prepared) -> str:
    key = secret_value(prepared.secrets.get(API_KEY)) if prepared.secrets is not None else None
    return key or ""
