"""``Flow``: everything synth-nb knows about one kind of training job, in one object.

A flow says which TOML files are its own, how they are validated, which secrets and overrides it uses, the
requests that submit a job, which events are noise, what its chart plots, what its explorer shows (a
capability is a method that answers None where the flow has none) and what a finished job leaves behind.
Everything outside ``synth_nb.flows`` asks the flow (``get_flow(name)``) instead of comparing flow names or
importing a flow's package, so a new kind of job is one sub-package plus one registration line.
"""

from __future__ import annotations

import functools
import json
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from synth_nb.contract import FlowEndpoints, FlowJobs
from synth_nb.flows.artifacts import Artifact, FinishedJob, status_artifact
from synth_nb.flows.chart import ChartSpec
from synth_nb.flows.health import HealthWarning
from synth_nb.flows.outcome import Gain, Usage, reported_usage
from synth_nb.flows.override_rows import OverrideRow
from synth_nb.flows.sample_rows import SampleSpec
from synth_nb.flows.search_mix import PromptSearch
from synth_nb.secrets import SYNTH_API_KEY

if TYPE_CHECKING:
    from pydantic import BaseModel

    from synth_nb.flows.overrides import Overrides
    from synth_nb.flows.schema import Problem
    from synth_nb.plan import Plan
    from synth_nb.records import Event
    from synth_nb.secrets import SecretBundle

__all__ = ["ConfigLike", "ExplorableJob", "Explorer", "Flow", "TaskAppRef", "Workload"]

#: event types hidden for every flow (keep-alive signals)
_HEARTBEATS = (".worker.alive", ".heartbeat")
#: ``Flow.noise_of_kind``'s answer when the noise words decide
_WORDS = object()


class ConfigLike(Protocol):
    """What plans read from a loaded config (``synth_nb.config.LoadedConfig``)."""

    path: Path
    flow: str
    algorithm: str | None
    raw: dict[str, Any]
    warnings: list[str]

    def line_of(self, dotted_key: str) -> int | None: ...


class ExplorableJob(Protocol):
    """What a flow's explorer reads from a job (``synth_nb.job.Job`` has it): events by type, a metric as
    ``(steps, values)`` arrays, the id and the status document."""

    @property
    def id(self) -> str: ...
    @property
    def status_doc(self) -> Mapping[str, Any]: ...
    @property
    def events(self) -> _EventsByType: ...
    @property
    def metrics(self) -> _MetricSeries: ...


class _EventsByType(Protocol):
    def of_types(self, types: Iterable[str]) -> Iterable[Event]: ...


class _MetricSeries(Protocol):
    def series(self, name: str) -> tuple[Any, Any]: ...


class Explorer(Protocol):
    """Why a run went as it did, as every caller may use it: a notebook output, exports and a table."""

    def summary_line(self) -> str: ...
    def to_html(self) -> str: ...
    def to_markdown(self) -> str: ...
    def frame(self, include_rejected: bool = False) -> Any:
        """The table; ``include_rejected``: also what the search made and did not keep (prompt learning)."""
    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]: ...


@dataclass(frozen=True)
class TaskAppRef:
    """The task app a config is written for: the task names it gives (first wins) and the URL written in it."""

    names: tuple[str, ...] = ()
    url: str | None = None


@dataclass(frozen=True)
class Workload:
    """What one job will do, read from its plan: the numbers a pre-flight estimate multiplies."""

    #: rollouts the job will run (None: nothing in the config bounds them)
    rollouts: int | None = None
    #: how ``rollouts`` (or ``tokens``) was counted, in the config's own words
    formula: str = ""
    #: rollouts run at the same time
    concurrency: int | None = None
    #: tokens the job trains on (SFT: dataset tokens x epochs)
    tokens: int | None = None
    #: the model whose price applies
    model: str | None = None
    #: the task app a dry rollout goes through, and the seed (and split) it uses: the job's first
    task_url: str | None = None
    seed: int | None = None
    split: str | None = None
    #: facts the pre-flight card shows as they are ("training data: 120 rows, ...")
    facts: tuple[str, ...] = ()
    #: what the token figure leaves out because it cannot be sized before the run; with any, the card
    #: shows the figure as a floor ("at least") and names each part
    token_gaps: tuple[str, ...] = ()
    #: the most tokens one reply may have, when training changes how long replies are (RL): a rollout is
    #: then counted as the dry rollout's prompt tokens plus this, not as the dry rollout's own reply
    reply_tokens: int | None = None
    #: tokens as the embedded backend counts them, when it counts them its own way (SFT's byte tokenizer
    #: for a model that is not on this machine), and how
    embedded_tokens: int | None = None
    embedded_tokens_how: str = ""
    #: a prompt search's schedule, which a dry proposal sizes: the ``token_gaps`` are then estimated too
    search: PromptSearch | None = None


@functools.cache
def _noise_search(words: tuple[str, ...]) -> tuple[Callable[[str], Any], Callable[[bytes], Any] | None]:
    """Searches for any of ``words`` (one pass in C, a million events print by ``--all-events``) in a text and, when
    every word is two or more ASCII letters (found in a JSON text only inside a string, a key or a literal), in
    a JSON text as bytes; None for the second otherwise."""
    either = "|".join(map(re.escape, words))
    plain = all(len(word) >= 2 and word.isascii() and word.isalpha() for word in words)
    return re.compile(either).search, re.compile(either.encode()).search if plain else None


@functools.cache
def _noise_bytes(words: tuple[str, ...]) -> tuple[bytes, ...]:
    """``words`` as bytes when ``_noise_search`` can look for them in a JSON text, else none."""
    return tuple(word.encode() for word in words) if _noise_search(words)[1] is not None else ()


class Flow(ABC):
    """One kind of training job (RL, SFT, prompt learning, ...). Subclasses set the class attributes."""

    #: registry key, also the ``flow`` of plans, jobs and the ``--dry-run --json`` document
    name: ClassVar[str]
    #: plain words for messages ("prompt learning")
    label: ClassVar[str]
    #: how this flow's jobs are found on a backend (its ``jobs`` module); a subclass that sets it takes its
    #: ``endpoints``, ``id_prefix`` and ``kind_words`` from it, one without sets those three itself
    jobs: ClassVar[FlowJobs | None] = None
    #: job ids of this flow start with it (used to guess the flow of a bare job id)
    id_prefix: ClassVar[str | None] = None
    #: what a backend's status document may call this flow's jobs (``job_type``, ``type``, ``algorithm``, ...)
    kind_words: ClassVar[frozenset[str]] = frozenset()
    endpoints: ClassVar[FlowEndpoints]
    #: secrets a job cannot be submitted without (the local backend supplies its own SYNTH_API_KEY)
    required_secrets: ClassVar[tuple[str, ...]] = (SYNTH_API_KEY,)
    #: ``Overrides`` fields this flow uses; any other given override is reported as ignored
    honoured_overrides: ClassVar[frozenset[str]] = frozenset({"backend", "idempotency"})
    #: override -> why this flow ignores it (shown with the warning)
    ignored_overrides: ClassVar[Mapping[str, str]] = MappingProxyType({})
    #: override -> the config keys it replaces, first one written wins (the wizard prefills its field)
    override_keys: ClassVar[Mapping[str, tuple[tuple[str, ...], ...]]] = MappingProxyType({})
    #: jobs train model weights on the backend's machine: the pre-flight card says on which device
    trains_weights: ClassVar[bool] = False
    #: the bundled example task app this flow's example configs are written for (None: none)
    example_task_app: ClassVar[str | None] = None
    #: overrides of this flow's own (``OverrideRow`` with the config keys each replaces): a flag, a wizard
    #: field, honoured by this flow only
    override_rows: ClassVar[tuple[OverrideRow, ...]] = ()
    #: the pydantic model of a whole TOML file of this flow
    config_model: ClassVar[type[BaseModel]]
    #: accepted ``[algorithm]`` (type, method, variety) triples; the first one's type is the expected type
    algorithm_triples: ClassVar[tuple[tuple[str, str, str], ...]] = ()
    #: how to write a TOML this flow claims, for "not a training config" messages
    detect_hint: ClassVar[str] = ""
    chart: ClassVar[ChartSpec]
    #: event types that change this flow's explorer (a live view redraws on them); empty when it has none
    explorer_event_types: ClassVar[frozenset[str]] = frozenset()
    #: the samples behind this flow's numbers, streamed as events (RL rollouts: ``job.rollouts()``; SFT
    #: completions: ``job.samples()``; ``spec.kind`` also names the bundle's ``<kind>.jsonl``); None: none
    sample_spec: ClassVar[SampleSpec | None] = None
    #: event types hidden by default for this flow
    noise_event_types: ClassVar[frozenset[str]] = frozenset()
    #: events whose type, message or data mention one of these words are hidden by default
    noise_words: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        jobs = cls.__dict__.get("jobs")
        if jobs is not None:
            cls.endpoints, cls.id_prefix, cls.kind_words = jobs.endpoints, jobs.id_prefix, jobs.kind_words

    def __repr__(self) -> str:
        return f"<Flow {self.name}>"

    def honours(self, override: str) -> bool:
        """Whether a given value of ``override`` changes this flow's plan (else it is reported as ignored)."""
        return override in self.honoured_overrides or any(row.name == override for row in self.override_rows)

    # ------------------------------------------------------------------ configs
    @abstractmethod
    def claims(self, raw: Mapping[str, Any]) -> bool:
        """True when a parsed TOML document is a config of this flow (asked in registration order)."""

    def algorithm_of(self, raw: Mapping[str, Any]) -> str | None:
        """The algorithm a claimed document names (``"gepa"``), or None."""
        return None

    def normalise(self, raw: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
        """The document to validate (a deliberate fix may rewrite it) and notes about what changed."""
        return raw, []

    def check(self, model: Any, raw: Mapping[str, Any]) -> list[Problem]:
        """Cross-field rules the pydantic model cannot express; ``Problem.warning`` ones do not fail."""
        return []

    def unknown_key_fate(self, key: tuple[str | int, ...]) -> str:
        """What happens to an unknown key (said in its warning)."""
        return "ignored (not sent)"

    def results_folder(self, config: ConfigLike) -> Path | None:
        """Where ``write_results`` puts files for jobs of this config (None: the flow writes none)."""
        return None

    def config_notes(self, config: ConfigLike) -> list[str]:
        """Warnings about a loaded config that need its path (e.g. the default results folder)."""
        return []

    def task_app_ref(self, config: ConfigLike) -> TaskAppRef | None:
        """The task app a config of this flow is written for (None: the flow uses none)."""
        return None

    def missing_files(self, config: ConfigLike) -> list[Problem]:
        """Files the config names that a submission needs and that are not there (a training dataset), so a
        list of configs marks it invalid before anything is asked; none by default."""
        return []

    # ------------------------------------------------------------------ submission
    @abstractmethod
    def build_plan(self, config: ConfigLike, overrides: Overrides, secrets: SecretBundle) -> Plan:
        """Every request a submission will send, built without sending anything."""

    def workload(self, plan: Plan) -> Workload:
        """What a job of this plan will do, for the pre-flight estimate (nothing is known by default)."""
        return Workload()

    def with_rollout_limit(self, plan: Plan, limit: int) -> Plan:
        """``plan`` with ``--max-rollouts`` in its job body, for a flow whose backend can stop at a rollout
        limit itself; a flow with no such field returns ``plan`` (the client-side watchdog alone applies)."""
        return plan

    # ------------------------------------------------------------------ watching
    def is_noise(self, event: Event) -> bool:
        """True for an event hidden by default: errors never are, heartbeats always are."""
        if event.is_error:
            return False
        if event.type.endswith(_HEARTBEATS):
            return True
        return self.hides(event)

    def is_noise_text(self, etype: str, level: str, message: str, data_json: bytes) -> bool | None:
        """``is_noise`` of the event with these fields and this JSON text of its ``data`` as sent, without building
        the event (``--all-events`` of a million events); None when the text cannot tell (ask ``is_noise``):
        ``noise_of_kind``, then, when the kind does not tell, ``noise_in_text``."""
        kind = self.noise_of_kind(etype, level)
        if kind is None or isinstance(kind, bool):
            return kind
        return self.noise_in_text(etype, message, data_json)

    def noise_of_kind(self, etype: str, level: str) -> bool | None | object:
        """What ``is_noise_text`` answers of every event of this type and level (a reader of many caches it by
        them): True or False, None (ask ``is_noise``: this flow overrides it or ``hides``), or ``_WORDS``
        when the noise words decide (``noise_in_text``)."""
        cls = type(self)
        if cls.is_noise is not Flow.is_noise or cls.hides is not Flow.hides:
            return None
        if level.lower() == "error" or etype.endswith(".failed"):  # ``Event.is_error``
            return False
        if etype.endswith(_HEARTBEATS) or etype in self.noise_event_types:
            return True
        return _WORDS if self.noise_words else False

    def noise_in_text(self, etype: str, message: str, data_json: bytes) -> bool | None:
        """Whether the noise words are in the event's type, message or data (its JSON text as sent); None when
        that text cannot tell.

        The same rule as ``hides``: a noise word absent from the data's JSON text as sent is absent from it as
        ``json.dumps`` writes it, when that text is plain ASCII with no escape (strings and keys are then
        written alike, and a word of two or more letters spans no punctuation and is no number); a word found
        there is checked on the event (a key sent twice keeps one value).
        """
        in_text, in_json = _noise_search(self.noise_words)
        if in_text(f"{etype} {message}".lower()) is not None:
            return True
        if in_json is None or not data_json.isascii() or b"\\" in data_json:
            return None
        return None if in_json(data_json.lower()) is not None else False

    def noise_absent(self, text: bytes | bytearray) -> bool:
        """Whether no noise word is in this JSON text of events (a chunk of them, as sent) where ``noise_in_text``
        would look: then it says False of each of them. False when it cannot tell (as ``noise_in_text``)."""
        words = _noise_bytes(self.noise_words)
        if not words or not text.isascii() or b"\\" in text:
            return False
        lowered = text.lower()
        return not any(word in lowered for word in words)  # a substring search per word: faster than one regex

    def hides(self, event: Event) -> bool:
        """This flow's own noise rule (``noise_event_types``, ``noise_words``)."""
        if event.type in self.noise_event_types:
            return True
        if not self.noise_words:
            return False
        text = f"{event.type} {event.message} {json.dumps(event.data or {}, default=str)}".lower()
        return any(word in text for word in self.noise_words)

    def explorer(self, job: ExplorableJob) -> Explorer | None:
        """Why the job's run went as it did, from what it holds so far (``job.explorer()``); None when this
        flow has no explorer."""
        return None

    def headline_scores(self, job: ExplorableJob) -> dict[str, float]:
        """``baseline_score`` / ``best_score`` for the final status block, wherever the job holds them (its
        status document or its events); none by default, so the block shows the status document's own."""
        return {}

    def usage(self, job: FinishedJob) -> Usage:
        """What the finished job reports it used (rollouts, tokens, cost) and why the backend says it ended; by
        default what every backend's shared names say (``synth_nb.flows.outcome.reported_usage``)."""
        return reported_usage(job)

    def gains(self, job: FinishedJob) -> list[Gain]:
        """The headline measure at the job's start and end, each with what it was measured on (none by default)."""
        return []

    def health(self, job: FinishedJob) -> list[HealthWarning]:
        """Signs in what the job streamed so far that its headline number misleads (``synth_nb.flows.health``),
        each with its evidence; none by default, and none from a rule whose data the backend does not send."""
        return []

    # ------------------------------------------------------------------ results
    def artifacts(self, job: FinishedJob) -> Artifact | None:
        """What the job shows when it ends; by default its final status document."""
        return status_artifact(job)

    def write_results(self, job: FinishedJob, folder: Path) -> Path | None:
        """Write the job's result files into ``folder``; the main file's path, or None if it has none."""
        return None

    @property
    def has_summary(self) -> bool:
        """Whether this flow writes result files (it has its own ``write_results``), for messages about it."""
        return type(self).write_results is not Flow.write_results
