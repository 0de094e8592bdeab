"""The runs a comparison reads: jobs held in this kernel, jobs from the folder's registry, any job id.

A ``Job`` object is read as it is. A job id is re-attached (its whole history fetched, not followed) from
the backend the registry says it went to, else ``--backend`` / the default, on a private event loop, so
this works from a notebook cell as well as from a script. A run's config comes from the file it was
submitted from (the registry remembers it), else from the backend's ``/config`` of the job.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from synth_nb.errors import BackendError, SynthNbError
from synth_nb.flows import get_flow
from synth_nb.records import Event, MetricPoint
from synth_nb.secrets.redact import redact_value

if TYPE_CHECKING:
    from synth_nb.job import Job, JobRecord, JobRegistry
    from synth_nb.pipeline import SecretSources

__all__ = ["Run", "flatten", "load_runs"]


@dataclass
class Run:
    """One job as a comparison sees it: identity, history, and its config as dotted keys."""

    job_id: str
    flow: str
    algorithm: str | None
    status: str
    status_doc: Mapping[str, Any]
    events: Sequence[Event]
    metrics: Sequence[MetricPoint]
    config_path: Path | None = None
    #: dotted key -> value (secrets masked); empty when no config could be read
    config: dict[str, Any] = field(default_factory=dict)
    #: "file", "backend" or "none": where ``config`` came from
    config_source: str = "none"
    notes: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        """What legends and tables call the run: its config file and its job id."""
        return f"{self.config_path.name} · {self.job_id}" if self.config_path else self.job_id

    @property
    def flow_label(self) -> str:
        label = get_flow(self.flow).label
        return f"{label} ({self.algorithm})" if self.algorithm else label


def flatten(node: Any, prefix: str = "") -> dict[str, Any]:
    """A TOML/JSON document as ``{"table.key": value}``; tables in lists become ``key[0].sub``."""
    if isinstance(node, Mapping):
        out: dict[str, Any] = {}
        for key, value in node.items():
            out.update(flatten(value, f"{prefix}.{key}" if prefix else str(key)))
        return out
    if isinstance(node, list) and node and all(isinstance(v, Mapping) for v in node):
        out = {}
        for i, value in enumerate(node):
            out.update(flatten(value, f"{prefix}[{i}]"))
        return out
    return {prefix: redact_value(prefix.rpartition(".")[2], node)}


def _config_from_file(record: JobRecord | None) -> tuple[Path | None, dict[str, Any], list[str]]:
    from synth_nb.job.registry import config_hash

    if record is None or not record.config_path:
        return None, {}, []
    path = Path(record.config_path)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        return path, {}, [f"{record.job_id}: its config {path} cannot be read now ({type(exc).__name__})"]
    notes = []
    if record.config_hash and config_hash(path) != record.config_hash:
        notes.append(f"{record.job_id}: {path.name} changed since the job was submitted; its current keys are shown")
    return path, flatten(raw), notes


def _run_of(job: Job, record: JobRecord | None, backend_config: Mapping[str, Any] | None) -> Run:
    path, config, notes = _config_from_file(record)
    source = "file" if config else "none"
    if not config and backend_config:
        body = backend_config.get("config_body", backend_config)
        config, source = flatten(body if isinstance(body, Mapping) else backend_config), "backend"
    return Run(job_id=job.id, flow=job.flow, algorithm=job.algorithm or (record.algorithm if record else None),
               status=job.status, status_doc=dict(job.status_doc), events=job.events, metrics=job.metrics,
               config_path=path, config=config, config_source=source, notes=notes)


async def _backend_config(job: Job) -> Mapping[str, Any] | None:
    """The job's create body as the backend kept it (the local backend serves ``…/{id}/config``)."""
    path = job.endpoints.status.replace("{job_id}", job.id) + "/config"
    try:
        doc = await job.client.request_json("GET", path)
    except BackendError:
        return None
    config = doc.get("config") if isinstance(doc, Mapping) else None
    return config if isinstance(config, Mapping) else None


async def _fetch_all(job_ids: Sequence[str], registry: JobRegistry, backend: str | None,
                     sources: SecretSources) -> list[tuple[Job, Mapping[str, Any] | None] | SynthNbError]:
    from synth_nb import pipeline

    async def one(job_id: str) -> tuple[Job, Mapping[str, Any] | None]:
        target = pipeline.attach_target(job_id, backend, registry)
        job = await pipeline.rebuild_job(job_id, target, sources.api_key(target), registry=registry)
        try:
            return job, await _backend_config(job)
        finally:
            await job.client.aclose()

    results = await asyncio.gather(*(one(i) for i in job_ids), return_exceptions=True)
    out: list[tuple[Job, Mapping[str, Any] | None] | SynthNbError] = []
    for result in results:
        if isinstance(result, SynthNbError) or not isinstance(result, BaseException):
            out.append(result)
        else:
            raise result
    return out


def fetch(job_ids: Sequence[str], registry: JobRegistry, backend: str | None,
          sources: SecretSources) -> list[tuple[Job, Mapping[str, Any] | None] | SynthNbError]:
    """Re-attach each id on a private loop in a worker thread (a notebook's own loop is busy running the cell)."""
    if not job_ids:
        return []
    with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="synth-nb-compare") as pool:
        return pool.submit(asyncio.run, _fetch_all(job_ids, registry, backend, sources)).result()


def load_runs(items: Iterable[Any] | None, *, folder: Path, backend: str | None,
              sources: SecretSources) -> tuple[list[Run], list[str]]:
    """Runs for ``items`` (``Job`` objects or job ids; None: every job in the folder's registry), in the order
    given, and a problem line for each one that could not be loaded."""
    from synth_nb.job import Job, JobRegistry

    registry = JobRegistry(folder)
    if isinstance(items, str | Job):
        items = [items]
    oldest_first = sorted(registry.list(), key=lambda r: r.submitted_at)  # stable: same-second jobs keep their order
    wanted = list(items) if items is not None else [r.job_id for r in oldest_first]
    ids = [w for w in wanted if isinstance(w, str)]
    fetched = dict(zip(ids, fetch(ids, registry, backend, sources), strict=True))
    runs: list[Run] = []
    problems: list[str] = []
    for item in wanted:
        if isinstance(item, Job):
            record = (item.registry or registry).get(item.id)
            runs.append(_run_of(item, record, None))
            continue
        if not isinstance(item, str):
            raise SynthNbError(f"compare takes jobs or job ids, not {type(item).__name__} ({item!r})")
        result = fetched[item]
        if isinstance(result, SynthNbError):
            problems.append(f"{item}: not loaded: {result}")
            continue
        job, config = result
        runs.append(_run_of(job, registry.get(item), config))
    for run in runs:
        problems += run.notes
    return runs, problems
