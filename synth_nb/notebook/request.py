"""``%synth_train`` arguments as a ``TrainRequest``: the CLI's flags with paths made absolute.

A notebook's relative paths mean "next to the notebook", whatever the kernel's working directory is, so
every path is resolved against the notebook's folder here, once.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from synth_nb.cli.args import LIMIT_FLAGS, OVERRIDE_FLAGS
from synth_nb.pipeline import SecretSources
from synth_nb.report import ReportOptions

__all__ = ["TrainRequest", "notebook_folder"]


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


def _resolve(folder: Path, raw: str | Path) -> Path:
    path = Path(raw).expanduser()
    return path if path.is_absolute() else (folder / path)


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
    #: ``--compare [ID ...]``: the job ids to compare (empty: every job from the folder), None: not asked
    compare: list[str] | None = None
    record: Path | None = None
    #: ``--check``: show the pre-flight card, send nothing
    check: bool = False
    #: ``--rerun JOB_ID``: submit that job's plan again from its bundle
    rerun: str | None = None
    #: ``--fork JOB_ID``: open the wizard prefilled from that job's bundle (``--out``: where its config goes)
    fork: str | None = None
    fork_out: Path | None = None
    #: the watchdog's limits (``--max-minutes`` ...), by flag dest; only those given
    limits: dict[str, float] = field(default_factory=dict)
    #: ``--report-to`` & co. (a relative ``--report-dir`` is under the notebook's folder)
    report: ReportOptions = field(default_factory=ReportOptions)

    @classmethod
    def from_args(cls, args: argparse.Namespace, folder: Path) -> TrainRequest:
        from synth_nb.job.watchdog import Limits

        Limits.from_values(vars(args))  # a bad limit fails before anything is sent
        overrides = {name: getattr(args, name, None) for name in OVERRIDE_FLAGS}
        if overrides.get("dataset"):
            overrides["dataset"] = str(_resolve(folder, str(overrides["dataset"])))
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
            compare=None if getattr(args, "compare", None) is None else list(args.compare),
            record=None if args.record is None else _resolve(folder, args.record),
            check=bool(getattr(args, "check", False)),
            rerun=getattr(args, "rerun", None),
            fork=getattr(args, "fork", None),
            fork_out=None if getattr(args, "fork_out", None) is None else _resolve(folder, args.fork_out),
            limits={k: getattr(args, k) for k in LIMIT_FLAGS if getattr(args, k, None) is not None},
            report=ReportOptions.from_values(vars(args), folder),
        )

    def sources(self, environ: Mapping[str, str] | None = None) -> SecretSources:
        """Where this request's secrets come from (``.env`` files are looked for from the notebook folder)."""
        return SecretSources(env_files=tuple(self.env_files), modal_secrets=tuple(self.modal_secrets),
                             environ=dict(os.environ if environ is None else environ), cwd=self.folder)
