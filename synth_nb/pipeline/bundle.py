"""A job's reproducible bundle: what was submitted and everything that came back, in one folder.

``record_run`` captures at submission what cannot be known later (the config as it was, the masked plan,
the overrides, sha256 of each uploaded file, the task app's ``/info``, the versions) and ``save`` keeps it
in the job's folder at once (``submitted.json``), so whichever command or kernel follows the job to its end,
a ``--no-poll`` job attached to later included, writes the bundle (``RunRecord.write``, called through
``Job.write_results``) with the job's full history, beside its result files: ``results_folder/<job_id>/`` or,
for configs without one, ``.synth_nb/runs/<job_id>/``. Every file is masked: known secret values,
secret-named keys, and key-shaped values in the config text.
"""

from __future__ import annotations

import hashlib
import json
import platform
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from synth_nb._version import __version__
from synth_nb.config.discover import BUNDLE_RECORD
from synth_nb.errors import ConfigError, SynthNbError
from synth_nb.flows import catalogue, get_flow
from synth_nb.job.ending import Ending
from synth_nb.job.registry import RUNS_DIR, JobRegistry
from synth_nb.job.report_html import REPORT_FILE, job_page
from synth_nb.job.samples import sample_table
from synth_nb.markup import md_text
from synth_nb.pipeline.preflight import skip_requested, task_app_for, task_app_info
from synth_nb.pipeline.prepare import Prepared
from synth_nb.plan import mask_payload
from synth_nb.secrets import mask, mask_text
from synth_nb.secrets.redact import is_secret_key, looks_like_secret, redact
from synth_nb.untrusted import contained, job_id_problem, shown_id

if TYPE_CHECKING:
    from synth_nb.job import Job

__all__ = ["BUNDLE_FILE", "RUNS_DIR", "SUBMITTED_FILE", "RunRecord", "bundle_folder", "bundled_estimate", "find_bundle",
           "read_bundle", "record_run", "submitted_run", "write_bundle"]

#: the bundle's own description; its presence makes a folder a bundle
BUNDLE_FILE = BUNDLE_RECORD  # config discovery leaves a folder holding it out
#: what a job was submitted with, kept in its folder until its bundle is written
SUBMITTED_FILE = "submitted.json"
#: ``key = "value"`` of a TOML file, on a line of its own or in an inline table (``headers = { auth = "…" }``)
_TOML_PAIR = re.compile(r"""(?P<key>[A-Za-z0-9_.-]+|"[^"\n]*"|'[^'\n]*')(?P<eq>[ \t]*=[ \t]*)"""
                        r"""(?P<value>"(?:[^"\\\n]|\\.)*"|'[^'\n]*')""")
#: every string of a TOML file (multi-line ones first) and every comment: where free text may hold a key
_TOML_TEXT = re.compile(r'''"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|'[^'\n]*'|#[^\n]*''')


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _public_overrides(overrides: dict[str, Any], hidden: list[str]) -> dict[str, Any]:
    """The flag values as saved: known secrets masked, and a key pasted into ``--model`` (no model id looks
    like one; a flow that ignores ``--model`` would otherwise keep it as given)."""
    public: dict[str, Any] = mask_payload(overrides, hidden)
    model = public.get("model")
    if isinstance(model, str) and looks_like_secret(model) and catalogue.base_model_of(model) is None:
        public["model"] = mask(model)
    return public


def _mask_pair(match: re.Match[str]) -> str:
    """``key = "value"`` with the value masked when the key names a secret (``${VAR}`` references stay)."""
    key, value = match.group("key").strip("\"'"), match.group("value")
    inner = value[1:-1]
    if not is_secret_key(key.rsplit(".", 1)[-1]) or not inner or inner.startswith("${"):
        return match.group(0)
    return f"{match.group('key')}{match.group('eq')}{value[0]}{mask(inner)}{value[-1]}"


def mask_toml(text: str, secrets: Iterable[str]) -> str:
    """Config text with known secrets masked, the string value of every secret-named key masked (``api_key``,
    ``auth``, ``authorization``, ``credentials``...), and every key-shaped string in any other string or
    comment (``sk-…``, ``Bearer …``, a long random token) masked; the rest as written."""
    named = _TOML_PAIR.sub(_mask_pair, mask_text(text, tuple(secrets)))
    return _TOML_TEXT.sub(lambda m: redact(m.group(0)), named)


@dataclass
class RunRecord:
    """What a job was submitted with; ``write_bundle`` adds what it did."""

    folder: Path
    flow: str
    algorithm: str | None
    plan: dict[str, Any]
    backend_url: str
    idempotency_key: str | None = None
    config_path: str | None = None
    config_text: str | None = None
    config_sha256: str | None = None
    overrides: dict[str, Any] = field(default_factory=dict)
    datasets: list[dict[str, Any]] = field(default_factory=list)
    task_app: dict[str, Any] | None = None
    submitted_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    versions: dict[str, str] = field(default_factory=dict)
    #: the embedded backend ran it (a re-run goes to the embedded backend again, wherever it listens now)
    embedded: bool = False
    #: the job this one re-runs
    parent: str | None = None
    #: the job this one was forked from (``--fork``: its config and overrides, then changed)
    forked_from: str | None = None
    #: the budget limits it was sent with (``--max-rollouts`` ...), by flag dest: a re-run repeats them
    limits: dict[str, float] = field(default_factory=dict)
    #: the pre-flight estimate it was sent with (``synth_nb.pipeline.estimate.plan_estimate``), shown beside
    #: what it used when it ends
    estimate: dict[str, Any] | None = None
    #: values masked in every file (never written themselves)
    secrets: list[str] = field(default_factory=list, repr=False)
    #: the bundle once written, or why it could not be
    written: Path | None = None
    problem: str | None = None

    def describe(self) -> dict[str, Any]:
        return {"flow": self.flow, "algorithm": self.algorithm, "backend_url": self.backend_url,
                "idempotency_key": self.idempotency_key, "config_path": self.config_path,
                "config_sha256": self.config_sha256, "submitted_at": self.submitted_at, "versions": self.versions,
                "embedded": self.embedded, "parent": self.parent, "forked_from": self.forked_from,
                "limits": self.limits}

    def save(self, job_id: str) -> None:
        """Keep this record in the job's folder (``submitted.json``, masked), so that whoever follows the job to
        its end, in this process or another, writes its bundle; ``problem`` says why it could not be kept."""
        kept = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in _NOT_KEPT}
        kept.update(folder=str(self.folder), datasets=mask_payload(self.datasets, self.secrets),
                    task_app=mask_payload(self.task_app, self.secrets))  # the rest is masked already
        try:
            folder = contained(self.folder, job_id)
            folder.mkdir(parents=True, exist_ok=True)
            text = json.dumps(kept, indent=2, ensure_ascii=False, default=str)
            (folder / SUBMITTED_FILE).write_text(mask_text(text, tuple(self.secrets)) + "\n", encoding="utf-8")
        except (OSError, TypeError, ValueError, SynthNbError) as exc:
            self.problem = f"could not write the bundle to {self.folder / job_id}: {exc}"

    def write(self, job: Job, files: Sequence[Path]) -> Path:
        """Write the bundle of ``job``, whose result files ``files`` are written already (``job.write_results``)."""
        watchdog = job.watchdog
        if job.estimate is None:  # a job attached to from another process: the estimate it was sent with
            job.estimate = self.estimate
        self.written = write_bundle(job, self, files, stopped_by=watchdog.stopped_by() if watchdog else None)
        (self.written / SUBMITTED_FILE).unlink(missing_ok=True)
        return self.written


#: what ``save`` leaves out: secrets are never written, the rest is known only later
_NOT_KEPT = ("secrets", "written", "problem", "folder")


def submitted_run(folder: Path) -> RunRecord | None:
    """The record ``RunRecord.save`` kept in a job's folder (None: none, or unreadable)."""
    try:
        doc = json.loads((folder / SUBMITTED_FILE).read_text(encoding="utf-8"))
        known = {f.name for f in fields(RunRecord)} - set(_NOT_KEPT)
        return RunRecord(folder=Path(doc["folder"]), **{k: v for k, v in doc.items() if k in known})
    except (OSError, ValueError, TypeError, KeyError):
        return None


def bundled_estimate(folder: Path) -> dict[str, Any] | None:
    """The estimate a job was sent with, from its written bundle's ``run.json`` (None: no bundle, or none kept)."""
    try:
        estimate = json.loads((folder / BUNDLE_FILE).read_text(encoding="utf-8")).get("estimate")
    except (OSError, ValueError, AttributeError):
        return None
    return estimate if isinstance(estimate, dict) else None


def _versions() -> dict[str, str]:
    return {"synth_nb": __version__, "python": platform.python_version(), "platform": platform.platform()}


def _datasets(item: Prepared) -> list[dict[str, Any]]:
    plan = item.plan
    out = []
    for step in plan.steps if plan is not None else []:
        if step.kind == "upload" and step.upload is not None:
            entry: dict[str, Any] = {"ref": step.ref, "path": str(step.upload)}
            try:
                entry.update(sha256=sha256_of(step.upload), bytes=step.upload.stat().st_size)
            except OSError as exc:
                entry["problem"] = exc.strerror or str(exc)
            out.append(entry)
    return out


def bundle_folder(item: Prepared, base: Path) -> Path:
    """Where a job of ``item`` keeps its bundles: the config's results folder, else ``base/.synth_nb/runs``."""
    plan = item.plan
    return plan.results_folder if plan is not None and plan.results_folder is not None else base / RUNS_DIR


def record_run(item: Prepared, *, base: Path, secrets: Sequence[str] = (), embedded: bool = False,
               parent: str | None = None, forked_from: str | None = None,
               limits: Mapping[str, float] | None = None, estimate: Mapping[str, Any] | None = None) -> RunRecord:
    """Capture, before submission, what the bundle of ``item``'s job will say it was submitted with.

    The task app is asked for its ``/info`` unless ``SYNTH_SKIP_TASK_APP_HEALTH_CHECK`` says to leave it be.
    """
    plan = item.plan
    if plan is None:
        raise ConfigError(f"{item.path}: no plan to record (the config did not prepare)")
    hidden = [*(s for s in secrets if s), *(s.get_secret_value() for s in plan.secrets if s.get_secret_value())]
    text = sha = None
    if plan.config_path is not None:
        try:
            raw = Path(plan.config_path).read_bytes()
            text, sha = mask_toml(raw.decode("utf-8", errors="replace"), hidden), hashlib.sha256(raw).hexdigest()
        except OSError:
            text = sha = None
    overrides = item.overrides.model_dump(mode="json", exclude_none=True) if item.overrides is not None else {}
    app = None if skip_requested([item.secrets]) else task_app_for(item)
    return RunRecord(
        folder=bundle_folder(item, base), flow=plan.flow, algorithm=plan.algorithm, plan=plan.preview(),
        backend_url=plan.backend_url, idempotency_key=plan.idempotency_key,
        config_path=str(plan.config_path) if plan.config_path else None, config_text=text, config_sha256=sha,
        overrides=_public_overrides(overrides, hidden), datasets=_datasets(item),
        task_app=task_app_info(app) if app is not None else None, versions=_versions(), embedded=embedded,
        parent=parent, forked_from=forked_from, limits=dict(limits or {}),
        estimate=None if estimate is None else dict(estimate), secrets=hidden)


def _jsonl(rows: Iterable[Any], secrets: Sequence[str]) -> str:
    """One masked JSON object per event or metric point (a backend may echo a body into an event)."""
    return "".join(json.dumps(mask_payload(row.model_dump(mode="json"), list(secrets)), ensure_ascii=False,
                              default=str) + "\n" for row in rows)


def _readme(job: Job, files: Sequence[str]) -> str:
    what = {
        BUNDLE_FILE: ("the job (id, flow, status, backend, times), synth-nb and Python versions, why it stopped "
                      "(stop_reason), the estimate it was sent with beside what it used (estimate_vs_actual), its "
                      "run-health warnings with their evidence (health)"),
        "config.toml": "the config file as it was when the job was submitted (secrets masked)",
        "plan.json": "every request the submission sent, as `synth-nb train --dry-run --json` prints it (masked)",
        "overrides.json": "the command-line / wizard overrides the plan was built with",
        "datasets.json": "path, size and sha256 of every uploaded dataset",
        "task_app.json": "what the task app said about itself (/info, else /task_info) at submission",
        "events.jsonl": "every event of the job, one JSON object per line, in seq order",
        "metrics.jsonl": "every metric point of the job, one JSON object per line",
        "rollouts.jsonl": "the sampled rollouts (RL): step, seed, prompt, completion, reward and its parts, "
                          "advantage, tokens; one JSON object per line (`job.rollouts()`)",
        "samples.jsonl": "the sample completions (SFT): step, prompt, reference, the model's reply; one JSON "
                         "object per line (`job.samples()`)",
        "status.json": "the job's final status document (masked)",
        REPORT_FILE: "the job's report: status, stop reason, figures, chart, summary, config; opens in any browser "
                     "with the network off",
    }
    lines = [f"# Run bundle of job {job.id}", "",
             f"A {job.flow} job that ended **{job.status}**. Submit the same plan again with "
             f"`synth-nb train --rerun {job.id}` (or `%synth_train --rerun {job.id}`); start a changed job from it "
             f"with `--fork {job.id}`.", "", "| file | what |",
             "|---|---|"]
    lines += [f"| `{name}` | {what.get(name, 'a result file of the job (summary, chart, artifacts)')} |"
              for name in files]
    return "\n".join(lines) + "\n"


def _artifacts(job: Job, folder: Path, files: Sequence[Path], ending: Ending) -> None:
    """A flow without result files of its own (``files``): its artifact as Markdown (its facts when it has no
    Markdown) with how the job ended, and its document."""
    if files:
        return
    artifact = get_flow(job.flow).artifacts(job)
    if artifact is None:
        return
    body = artifact.markdown or "\n".join(f"- {md_text(fact)}" for fact in artifact.facts)
    (folder / "summary.md").write_text(f"# {md_text(artifact.title)}\n\n{body}\n\n{ending.markdown()}\n",
                                       encoding="utf-8")
    if artifact.document is not None:
        contained(folder, artifact.document.name).write_text(artifact.document.text, encoding="utf-8")


def write_bundle(job: Job, run: RunRecord, files: Sequence[Path] = (), *,
                 stopped_by: dict[str, Any] | None = None) -> Path:
    """Write ``run`` and ``job``'s whole history into ``run.folder/<job id>/``, beside the job's result files
    (``files``); returns that folder."""
    folder = contained(run.folder, job.id)
    folder.mkdir(parents=True, exist_ok=True)
    secrets = (*run.secrets, *job.hidden)

    def put(name: str, text: str) -> None:
        (folder / name).write_text(mask_text(text, secrets), encoding="utf-8")

    def put_json(name: str, value: Any, *, masked: bool = False) -> None:
        safe = value if masked else mask_payload(value, list(secrets))
        put(name, json.dumps(safe, indent=2, ensure_ascii=False, default=str) + "\n")

    ending = job.ending()
    _artifacts(job, folder, files, ending)
    if run.config_text is not None:
        put("config.toml", run.config_text)
    put_json("plan.json", run.plan, masked=True)  # ``plan.preview()``: masking it again would change it
    put_json("overrides.json", run.overrides, masked=True)
    put_json("datasets.json", run.datasets)
    if run.task_app is not None:
        put_json("task_app.json", run.task_app)
    put("events.jsonl", _jsonl(job.events, secrets))
    put("metrics.jsonl", _jsonl(job.metrics, secrets))
    spec = get_flow(job.flow).sample_spec
    if spec is not None and len(samples := sample_table(job, spec.kind)):
        put(f"{spec.kind}.jsonl", "".join(json.dumps(mask_payload(row, list(secrets)), ensure_ascii=False) + "\n"
                                          for row in samples.rows))
    put_json("status.json", dict(job.status_doc or {}))
    put_json(BUNDLE_FILE, {"job_id": job.id, "status": job.status, **run.describe(),
                           "ended_at": datetime.now(UTC).isoformat(timespec="seconds"), "stopped_by": stopped_by,
                           **ending.as_dict()})
    try:  # after the files it shows (config, plan); one that cannot be made leaves the bundle whole, and the
        put(REPORT_FILE, job_page(job, folder))  # results' writer tries again, saying why (``Results.report_problem``)
    except Exception:  # noqa: BLE001 - the README lists only the files written
        (folder / REPORT_FILE).unlink(missing_ok=True)
    names = sorted(p.name for p in folder.iterdir() if p.is_file() and p.name not in ("README.md", SUBMITTED_FILE))
    put("README.md", _readme(job, names))
    return folder


def find_bundle(job_id: str, folder: Path) -> Path:
    """The bundle of ``job_id``: in the results folder the registry remembers, else ``.synth_nb/runs``."""
    problem = job_id_problem(job_id)
    if problem is not None:
        raise ConfigError(f"{shown_id(job_id)} is not a job id: {problem}", key="JOB_ID")
    candidates = []
    record = JobRegistry(folder).get(job_id)
    if record is not None and record.results_folder:
        candidates.append(contained(Path(record.results_folder), job_id))
    candidates.append(contained(folder / RUNS_DIR, job_id))
    for candidate in candidates:
        if (candidate / BUNDLE_FILE).is_file():
            return candidate
    where = " or ".join(str(c) for c in candidates)
    raise ConfigError(f"no bundle of job {job_id} in {where}; a bundle is written when a job submitted from "
                      f"this folder ends while it is being followed (`synth-nb attach {job_id}` follows it)")


def read_bundle(folder: Path) -> dict[str, Any]:
    """The bundle's ``run.json``, ``plan.json`` and ``overrides.json``, as one dict."""
    try:
        out = json.loads((folder / BUNDLE_FILE).read_text(encoding="utf-8"))
        out["plan"] = json.loads((folder / "plan.json").read_text(encoding="utf-8"))
        out["overrides"] = json.loads((folder / "overrides.json").read_text(encoding="utf-8"))
        datasets = folder / "datasets.json"
        out["datasets"] = json.loads(datasets.read_text(encoding="utf-8")) if datasets.is_file() else []
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(f"the bundle is unreadable: {exc}", path=folder) from None
    config = folder / "config.toml"
    out["config_text"] = config.read_text(encoding="utf-8") if config.is_file() else None
    return dict(out)
