"""Replay executor: re-emits a recorded job stream with its original timing, for deterministic demos/tests.

A recording is JSONL, one ``{"t": seconds_since_start, "kind": "meta"|"status"|"event"|"metric",
"payload": {...}}`` per line (the format ``synth_nb.job.recording`` writes). Selected by a create body with
``metadata.local_executor = "replay"``; ``metadata.recording`` is a bundled name (``sft``, ``rl``, ``gepa``,
``mipro``) or a file in the server's recordings folder (``options["recordings_dir"]``; a name, a path
relative to it or an absolute path inside it), default: the bundled one for the job's flow. Any other path
is refused (400): a key holder must not make the server read arbitrary files. ``metadata.replay_speed``
divides the recorded delays (default 1, or ``ctx.options["speed"]``, set with the server's
``executor_options={"replay": {"speed": ...}}``).

Recorded statuses drive the ending: ``failed``/``error`` fails the job with the recorded error,
``cancelled`` ends it cancelled. Result fields of recorded status documents (``fine_tuned_model``,
``best_score``…) are merged into the job's status, those recorded after the first event a client stops at
(``dialects.CLIENT_TERMINAL_EVENTS``) before it. Lifecycle events the server emits itself are skipped.
"""

from __future__ import annotations

import functools
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from synth_nb.local.dialects import CLIENT_TERMINAL_EVENTS
from synth_nb.local.errors import ExecutorInputError, RecordingNotAllowed, ReplayedFailure
from synth_nb.local.executors.base import JobContext
from synth_nb.local.lifecycle import replay_speed_problem, server_event_types

__all__ = ["BUNDLED_DIR", "ReplayExecutor", "RecordedLine", "load_recording", "resolve_recording"]

BUNDLED_DIR = Path(__file__).resolve().parent.parent / "recordings"
_KINDS = ("meta", "status", "event", "metric")
#: lines due within this many seconds are replayed without sleeping first (a recording with events every
#: couple of milliseconds would otherwise wake its thread once per event)
_GRANULARITY = 0.005
_FLOW_OF = {"sft": "sft", "rl": "rl", "gepa": "prompt_learning", "mipro": "prompt_learning",
            "prompt_learning": "prompt_learning"}
#: status-document keys owned by the replaying server, never copied from a recording
_NOT_RESULTS = frozenset({
    "status", "state", "job_id", "id", "object", "type", "job_type", "created_at", "updated_at", "started_at",
    "finished_at", "executor", "cancel_requested", "last_seq", "error", "kind", "flow", "algorithm",
})


@dataclass(frozen=True)
class RecordedLine:
    t: float
    kind: str
    payload: dict[str, Any]


def _metadata(body: dict[str, Any]) -> dict[str, Any]:
    meta = body.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _requested(kind: str, body: dict[str, Any]) -> str:
    name = _metadata(body).get("recording")
    if name is None:
        if kind == "prompt_learning":
            from synth_nb.local.executors import prompt_learning_algorithm

            return prompt_learning_algorithm(body) or "gepa"
        return kind
    if not isinstance(name, str) or not name.strip():
        raise ExecutorInputError("metadata.recording must be a bundled recording name or a file path")
    return name


def _jsonl(name: str) -> str:
    return name if name.endswith(".jsonl") else f"{name}.jsonl"


def resolve_recording(kind: str, body: dict[str, Any], options: dict[str, Any] | None = None) -> Path:
    """The recording a job asks for: bundled, or inside ``options["recordings_dir"]``; else refused."""
    name = _requested(kind, body)
    raw = options.get("recordings_dir") if options else None
    folder = Path(raw).resolve() if raw else None
    plain = "/" not in name and "\\" not in name
    if plain and (BUNDLED_DIR / _jsonl(name)).is_file():
        return BUNDLED_DIR / _jsonl(name)
    known = sorted(p.stem for p in BUNDLED_DIR.glob("*.jsonl"))
    in_folder = f"a file in {folder}" if folder else "a file in the recordings folder (none is configured)"
    path = Path(name).expanduser()
    if plain:
        candidates = [folder / _jsonl(name), folder / name] if folder else []
    else:
        candidates = [folder / path if folder and not path.is_absolute() else path]
    for candidate in candidates:
        resolved = candidate.resolve()
        if (not plain or candidate.exists()) and (folder is None or not resolved.is_relative_to(folder)):
            raise RecordingNotAllowed(f"metadata.recording {name!r} is outside the places replays may read: "
                                      f"name a bundled recording {known} or {in_folder} (set the folder with "
                                      "recordings_dir / synth-nb backend --recordings-dir)")
        if resolved.is_file():
            return resolved
    raise ExecutorInputError(f"metadata.recording {name!r} is neither a bundled recording {known} nor {in_folder}")


def load_recording(path: Path) -> list[RecordedLine]:
    """Parse and check a recording; ``ExecutorInputError`` names the first bad line.

    Parsed once per file version: a job's creation checks the recording and its run reads it again, and
    many jobs may replay the same one.
    """
    try:
        version = path.stat()
    except OSError as exc:
        raise ExecutorInputError(f"cannot read recording {path.name}: {exc}") from None
    return list(_parsed(path, version.st_mtime_ns, version.st_size))


@functools.lru_cache(maxsize=8)
def _parsed(path: Path, mtime_ns: int, size: int) -> tuple[RecordedLine, ...]:
    lines: list[RecordedLine] = []
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ExecutorInputError(f"cannot read recording {path.name}: {exc}") from None
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            item = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ExecutorInputError(f"{path.name} line {number}: not JSON ({exc.msg})") from None
        t, kind, payload = (item.get("t"), item.get("kind"), item.get("payload")) if isinstance(item, dict) \
            else (None, None, None)
        if not isinstance(t, int | float) or isinstance(t, bool) or t < 0:
            raise ExecutorInputError(f"{path.name} line {number}: 't' must be a number >= 0")
        if kind not in _KINDS or not isinstance(payload, dict):
            raise ExecutorInputError(f"{path.name} line {number}: needs kind in {_KINDS} and an object payload")
        if kind == "event" and not isinstance(payload.get("type"), str):
            raise ExecutorInputError(f"{path.name} line {number}: an event needs a string 'type'")
        if kind == "metric" and not (isinstance(payload.get("name"), str) and _number(payload.get("value"))
                                     and isinstance(payload.get("step"), int)):
            raise ExecutorInputError(f"{path.name} line {number}: a metric needs name, integer step, numeric value")
        lines.append(RecordedLine(float(t), kind, payload))
    if not lines:
        raise ExecutorInputError(f"recording {path.name} is empty")
    return tuple(sorted(lines, key=lambda line: line.t))


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _recorded_flow(lines: list[RecordedLine]) -> str | None:
    for line in lines:
        if line.kind == "meta":
            flow = line.payload.get("flow")
            return _FLOW_OF.get(flow, flow) if isinstance(flow, str) else None
    return None


def _speed(ctx_or_body: dict[str, Any], options: dict[str, Any]) -> float:
    speed = _metadata(ctx_or_body).get("replay_speed", options.get("speed", 1.0))
    problem = replay_speed_problem(speed)
    if problem:
        raise ExecutorInputError(f"metadata.replay_speed {problem}")
    return float(speed)


class ReplayExecutor:
    name = "replay"

    def validate(self, kind: str, body: dict[str, Any], options: dict[str, Any] | None = None) -> None:
        lines = load_recording(resolve_recording(kind, body, options))
        flow = _recorded_flow(lines)
        if flow is not None and flow != kind:
            raise ExecutorInputError(f"the recording is of a {flow} job; this is a {kind} job")
        _speed(body, {})

    def run(self, ctx: JobContext) -> None:
        options = getattr(ctx, "options", None) or {}
        lines = load_recording(resolve_recording(ctx.kind, ctx.body, options))
        speed = _speed(ctx.body, options)
        skipped = server_event_types(ctx.kind) | {"replay.started"}
        ctx.emit("replay.started", f"Replaying a recorded {ctx.kind} job at {speed:g}x",
                 {"lines": len(lines), "speed": speed})
        start, began = lines[0].t, time.monotonic()
        ending_results_applied = False
        for number, line in enumerate(lines):
            delay = began + (line.t - start) / speed - time.monotonic()
            if delay > _GRANULARITY and ctx.cancelled.wait(delay):
                return
            if ctx.cancelled.is_set():
                return
            if line.kind == "event" and line.payload["type"] not in skipped:
                p = line.payload
                if p["type"] in CLIENT_TERMINAL_EVENTS and not ending_results_applied:
                    ending_results_applied = True  # recorded after it, but later clients stop at this event
                    for later in lines[number:]:
                        if later.kind == "status":
                            self._apply_results(ctx, later.payload)
                data = p.get("data") if isinstance(p.get("data"), dict) else {}
                ctx.emit(p["type"], str(p.get("message") or ""), data, str(p.get("level") or "info"))
            elif line.kind == "metric":
                p = line.payload
                data = p.get("data") if isinstance(p.get("data"), dict) else None
                ctx.metric(p["name"], int(p["step"]), float(p["value"]), data)
            elif line.kind == "status":
                self._apply_status(ctx, line.payload)

    @staticmethod
    def _apply_results(ctx: JobContext, doc: dict[str, Any]) -> None:
        results = {k: v for k, v in doc.items() if k not in _NOT_RESULTS}
        if results:
            ctx.update_result(**results)

    @classmethod
    def _apply_status(cls, ctx: JobContext, doc: dict[str, Any]) -> None:
        cls._apply_results(ctx, doc)
        status = str(doc.get("status") or doc.get("state") or "").lower()
        if status in ("failed", "error"):
            raise ReplayedFailure(str(doc.get("error") or "the recorded job failed"))
        if status in ("cancelled", "canceled"):
            ctx.cancelled.set()
