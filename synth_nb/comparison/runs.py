"""The runs a comparison reads: jobs held in this kernel, jobs from the folder's registry, any job id.

A ``Job`` object is read as it is. A job id is re-attached (its whole history fetched, not followed) from
the backend the registry says it went to, else ``--backend`` / the default, on a private event loop, so
this works from a notebook cell as well as from a script. What a run was sent with is the plan it was
submitted with, flags and overrides included (its bundle's ``plan.json``, ``overrides.json`` and limits, or
the record kept while it runs: ``sent``); a run sent from elsewhere has only its config: the file it was
submitted from (the registry remembers it), else the backend's ``/config`` of the job. How each run ended
(its stop reason, what it gained and on which data) is its job's own (``synth_nb.job.ending``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from synth_nb.errors import BackendError, ConfigError, NotFoundError, SynthNbError
from synth_nb.flows import get_flow
from synth_nb.flows.outcome import Gain
from synth_nb.job.ending import ending_of, short_reason
from synth_nb.pipeline.bundle import BUNDLE_FILE, read_bundle, submitted_run
from synth_nb.records import Event, MetricPoint
from synth_nb.secrets.redact import redact_value
from synth_nb.untrusted import contained

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
    #: the plan it was submitted with as dotted keys (the create request's body, the uploads, the flags and
    #: limits given), from its bundle; empty for a run not sent from this folder
    sent: dict[str, Any] = field(default_factory=dict)
    #: why it stopped (the first clause of its stop reason) and what it gained, on which data
    stopped: str = ""
    gains: tuple[Gain, ...] = ()

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


def _create_body(plan: Mapping[str, Any]) -> Mapping[str, Any]:
    """The body of the request that created the job (the last POST that is not a start call)."""
    steps = [s for s in plan.get("steps") or [] if isinstance(s, Mapping) and s.get("method") == "POST"
             and not str(s.get("path", "")).endswith("/start") and isinstance(s.get("body"), Mapping)]
    return steps[-1]["body"] if steps else {}


def submitted_plan(job_id: str, record: JobRecord | None, folder: Path) -> dict[str, Any]:
    """What the job was sent with, as dotted keys: the create request's body, each upload (file and sha256),
    and the flags and limits given (``--rollout-budget``, ``--max-rollouts`` …); empty when this folder keeps
    no bundle or record of it."""
    from synth_nb.job.registry import RUNS_DIR

    places = [Path(record.results_folder) if record and record.results_folder else None, folder / RUNS_DIR]
    for place in [p for p in places if p is not None]:
        try:
            where = contained(place, job_id)
        except SynthNbError:
            return {}
        if (where / BUNDLE_FILE).is_file():
            try:
                kept = read_bundle(where)
            except SynthNbError:
                return {}
            plan, datasets = kept["plan"], kept["datasets"]
            overrides, limits = kept.get("overrides"), kept.get("limits")
        else:
            record_kept = submitted_run(where)
            if record_kept is None:
                continue
            plan, overrides, limits, datasets = (record_kept.plan, record_kept.overrides, record_kept.limits,
                                                 record_kept.datasets)
        out = flatten(_create_body(plan))
        out.update({f"upload {d.get('ref')}": f"{Path(str(d.get('path'))).name} (sha256 {str(d.get('sha256'))[:12]})"
                    for d in datasets or [] if isinstance(d, Mapping)})
        flags = {**(overrides or {}), **(limits or {})}
        out.update({f"--{name.replace('_', '-')}": redact_value(name, value) for name, value in flags.items()
                    if name != "idempotency"})
        return out
    return {}


def _run_of(job: Job, record: JobRecord | None, backend_config: Mapping[str, Any] | None, folder: Path) -> Run:
    path, config, notes = _config_from_file(record)
    source = "file" if config else "none"
    if not config and backend_config:
        body = backend_config.get("config_body", backend_config)
        config, source = flatten(body if isinstance(body, Mapping) else backend_config), "backend"
    ending = job.ending() if hasattr(job, "ending") else ending_of(job)
    return Run(job_id=job.id, flow=job.flow, algorithm=job.algorithm or (record.algorithm if record else None),
               status=job.status, status_doc=dict(job.status_doc), events=job.events, metrics=job.metrics,
               config_path=path, config=config, config_source=source, notes=notes,
               sent=submitted_plan(job.id, record, folder), stopped=short_reason(ending.stop.text),
               gains=ending.gains)


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
    given, and a problem line for each one that could not be loaded; an id no backend knows is a
    ``ConfigError`` naming it (exit 2, a UsageError in the magic)."""
    from synth_nb.job import Job, JobRegistry

    registry = JobRegistry(folder)
    if isinstance(items, str | Job):
        items = [items]
    oldest_first = sorted(registry.list(), key=lambda r: r.submitted_at)  # stable: same-second jobs keep their order
    wanted = list(items) if items is not None else [r.job_id for r in oldest_first]
    ids = [w for w in wanted if isinstance(w, str)]
    fetched = dict(zip(ids, fetch(ids, registry, backend, sources), strict=True))
    unknown = [i for i, result in fetched.items() if isinstance(result, NotFoundError | ConfigError)]
    if unknown:  # a typo is a usage error, not an empty table
        said = "; ".join(str(fetched[i]) for i in unknown)
        raise ConfigError(f"no such job to compare: {', '.join(unknown)} ({said})", key="compare",
                          hint="list the jobs sent from this folder with --jobs (synth-nb jobs)")
    runs: list[Run] = []
    problems: list[str] = []
    for item in wanted:
        if isinstance(item, Job):
            record = (item.registry or registry).get(item.id)
            runs.append(_run_of(item, record, None, folder))
            continue
        if not isinstance(item, str):
            raise SynthNbError(f"compare takes jobs or job ids, not {type(item).__name__} ({item!r})")
        result = fetched[item]
        if isinstance(result, SynthNbError):
            problems.append(f"{item}: not loaded: {result}")
            continue
        job, config = result
        runs.append(_run_of(job, registry.get(item), config, folder))
    for run in runs:
        problems += run.notes
    return runs, problems
