"""The ``%synth_train`` wizard: configs → secrets → overrides → preview → submit, in one anywidget.

Secrets never enter a synced trait. The front end receives masked values only; a pasted key travels
in a custom message (``model.send``), is kept kernel-side as a ``SecretStr`` and the password field is
cleared by the front end as soon as the message is sent. A backend URL or an override that holds a
credential is kept kernel-side too, its trait showing it masked (``wizard_kept.KeptValues``). Every state change is recomputed on the
kernel loop (``kernel_loop.KernelLoop``) because comm callbacks may arrive on a subshell thread. Every
config goes through ``synth_nb.pipeline``, like the magic's and the CLI's. The monitor panels of
submitted jobs are plain outputs of the wizard's own cell (``output_redirect.CellContext``), so a saved
notebook keeps their chart and summary; once it submits, the wizard itself is over and its output is
replaced by what it sent (``live_output.LiveOutput``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import html
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anywidget
import traitlets
from pydantic import SecretStr

from synth_nb.errors import OverrideError, SecretsError
from synth_nb.notebook.cell_value import is_shown
from synth_nb.notebook.kernel_loop import KernelLoop
from synth_nb.notebook.live_output import LiveOutput
from synth_nb.notebook.output_redirect import CellContext
from synth_nb.notebook.show import submitted_bundle
from synth_nb.notebook.wizard_inputs import (
    OVERRIDE_SPECS,
    discover,
    env_files_in,
    override_specs,
    parse_overrides,
    prefill_overrides,
    task_url_field,
)
from synth_nb.notebook.wizard_kept import KeptFields, KeptValues
from synth_nb.notebook.wizard_preflight import PreflightStep
from synth_nb.notebook.wizard_review import Baseline, load_last, merge_secret_rows, preview_row
from synth_nb.notebook.wizard_submit import SubmitStep
from synth_nb.pipeline import Prepared, Target, actions
from synth_nb.pipeline.preview import preview_text
from synth_nb.pipeline.request import Request
from synth_nb.secrets.redact import redact

if TYPE_CHECKING:
    from synth_nb.pipeline.fork import Fork

__all__ = ["Wizard", "open_wizard"]

STEPS = ("configs", "secrets", "overrides", "preview", "submit")
#: the wizard asks nothing of the pipeline: the configs ticked are the ones sent (none ticked: none)
WIZARD_HOOKS = actions.Hooks(pick_configs=lambda _folder, _several: [])


class Wizard(SubmitStep, KeptFields, PreflightStep, anywidget.AnyWidget):
    """One composite panel; ``.jobs`` holds the submitted ``Job`` objects."""

    #: the most recently created wizard in this kernel (``Wizard.latest.jobs`` after submitting)
    latest: Wizard | None = None

    _esm = Path(__file__).resolve().parent.parent / "static" / "wizard.js"
    _css = Path(__file__).resolve().parent.parent / "static" / "wizard.css"

    step = traitlets.Unicode("configs").tag(sync=True)
    folder = traitlets.Unicode("").tag(sync=True)
    configs = traitlets.List(traitlets.Dict()).tag(sync=True)
    selected = traitlets.List(traitlets.Unicode()).tag(sync=True)
    env_files_available = traitlets.List(traitlets.Unicode()).tag(sync=True)
    env_file = traitlets.Unicode("").tag(sync=True)
    use_modal = traitlets.Bool(False).tag(sync=True)
    modal_secret = traitlets.Unicode("").tag(sync=True)
    secrets = traitlets.List(traitlets.Dict()).tag(sync=True)
    #: shown masked when it holds a credential (``_masked_backend``); no echo of what the front end sent, which
    #: ipywidgets would apply after the masked value and so put the credential back in the front end's state
    backend = traitlets.Unicode("").tag(sync=True, echo_update=False)
    #: where the jobs would go (the embedded backend's URL once started), key-shaped parts masked
    backend_url = traitlets.Unicode("").tag(sync=True)
    backend_embedded = traitlets.Bool(False).tag(sync=True)
    override_fields = traitlets.List(traitlets.Dict()).tag(sync=True)
    #: like ``backend``: values holding a credential are shown masked, and not echoed
    overrides = traitlets.Dict().tag(sync=True, echo_update=False)
    override_errors = traitlets.Dict().tag(sync=True)
    previews = traitlets.List(traitlets.Dict()).tag(sync=True)
    blockers = traitlets.List(traitlets.Unicode()).tag(sync=True)
    can_submit = traitlets.Bool(False).tag(sync=True)
    submitting = traitlets.Bool(False).tag(sync=True)
    submitted = traitlets.List(traitlets.Dict()).tag(sync=True)
    submitted_to = traitlets.Unicode("").tag(sync=True)
    #: the payloads now are the ones last submitted from this notebook: sending them again needs a confirmation
    duplicate = traitlets.Bool(False).tag(sync=True)
    submit_error = traitlets.Unicode("").tag(sync=True)
    #: the Preview step's pre-flight cards (masked static HTML), for the payloads shown; none sends a job
    preflight = traitlets.List(traitlets.Dict()).tag(sync=True)
    preflight_running = traitlets.Bool(False).tag(sync=True)
    preflight_error = traitlets.Unicode("").tag(sync=True)
    #: the job this wizard forks (``--fork``): prefilled from its bundle, the Preview diffed against it
    forked_from = traitlets.Unicode("").tag(sync=True)

    def __init__(self, folder: Path, *, preselect: list[Path] | None = None, overrides: dict[str, Any] | None = None,
                 env_files: list[Path] | None = None, modal_secrets: list[str] | None = None,
                 backend: str | None = None, environ: dict[str, str] | None = None,
                 loop: KernelLoop | None = None, on_submitted: Any = None, fork: Fork | None = None,
                 request: Request | None = None) -> None:
        #: the values behind masked ``backend`` / ``overrides`` (first: the traits' validators use it)
        self._kept = KeptValues()
        #: the selected config's own values of the override fields (the fields' placeholders show them masked)
        self._prefill: dict[str, Any] = {}
        self._own: dict[str, Any] = {}
        super().__init__()
        self._fork = fork
        self.forked_from = fork.job_id if fork is not None else ""
        self._folder = Path(folder).resolve()
        #: the magic's request: how submitted jobs are followed (--record, --no-poll, --poll-interval,
        #: --report-to, the --max-minutes & co. watchdog), the same as its --yes path
        self._request = Request(self._folder) if request is None else dataclasses.replace(request, folder=self._folder)
        self._environ = dict(os.environ if environ is None else environ)
        self._loop = loop or KernelLoop.capture()
        self._pasted: dict[str, SecretStr] = {}
        self._prepared: list[Prepared] = []
        self._target: Target | None = None
        self._batch: actions.Batch | None = None
        #: the masked payloads last submitted from this notebook's folder: the same again needs a second action
        self._submitted_previews = load_last(self._folder)
        #: the cell that displayed the wizard: the monitor panels of submitted jobs are shown there
        self._cell = CellContext()
        #: the wizard's output: a static snapshot replaces it once it submits (or its kernel stops first)
        self.output = LiveOutput(self.snapshot, name="wizard")
        self._sent_text = ""  # the masked preview of what was submitted, for the snapshot
        self._initial_overrides = {k: v for k, v in (overrides or {}).items() if v is not None}
        self._on_submitted = on_submitted
        self.jobs: list[Any] = []
        #: the monitor panels opened for ``jobs`` (``await wizard.panels[0]`` blocks until the end)
        self.panels: list[Any] = []
        self.submit_task: asyncio.Future[Any] | None = None
        self.preflight_task: asyncio.Future[Any] | None = None
        self._preflight_rows: list[dict[str, Any]] = []
        self.folder = str(self._folder)
        self.configs = self._discover()
        self.env_files_available = env_files_in(self._folder)
        extra_env = [self._rel(p) for p in env_files or []]
        self.env_file = extra_env[0] if extra_env else ""
        self.modal_secret = (modal_secrets or [""])[0]
        self.use_modal = bool(modal_secrets)
        self.backend = backend or ""
        self.selected = self._initial_selection(preselect or [])
        self.override_fields = []
        self._refresh_prefill()
        self.observe(self._changed, names=["selected", "env_file", "use_modal", "modal_secret", "backend",
                                           "overrides"])
        self.on_msg(self._message)
        self._recompute()
        Wizard.latest = self

    # ------------------------------------------------------------------ kernel-side plumbing

    def _rel(self, path: Path | str) -> str:
        p = Path(path)
        try:
            return str(p.resolve().relative_to(self._folder))
        except ValueError:
            return str(p)

    def _initial_selection(self, preselect: list[Path]) -> list[str]:
        """The configs the caller named, else the only valid one: with several, the user ticks what to send.

        Ticking a second config beside a pre-ticked one would quietly submit both.
        """
        wanted = {self._rel(p) for p in preselect}
        named = [c["path"] for c in self.configs if c["path"] in wanted]
        valid = [c["path"] for c in self.configs if c["valid"]]
        return named or (valid if len(valid) == 1 else [])

    def _short(self, text: str) -> str:
        """Messages and sources name files relative to the notebook folder (shorter, no home paths)."""
        return text.replace(str(self._folder) + os.sep, "") if text else text

    def _changed(self, change: dict[str, Any]) -> None:
        self._loop.call_soon(self._apply_change, change["name"])

    def _apply_change(self, name: str) -> None:
        if name == "selected":
            self._refresh_prefill()
        self._recompute()

    def _message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if not isinstance(content, dict):
            return
        kind = content.get("type")
        if kind == "paste_secret":
            name, value = str(content.get("name", "")), str(content.get("value", ""))
            content.clear()  # drop our reference to the raw value as early as possible
            self._loop.call_soon(self._paste, name, SecretStr(value.strip()))
        elif kind == "keep":  # at once: the field's masked trait, next on this comm, must find the value
            self._kept.keep(str(content.get("field", "")), str(content.get("value", "")))
            content.clear()
        elif kind == "submit":
            self._loop.call_soon(self._start_submit, content.get("duplicate") is True)
        elif kind == "refresh":
            self._loop.call_soon(self._rediscover)
        elif kind == "preflight":
            self._loop.call_soon(self._start_preflight)

    def _paste(self, name: str, value: SecretStr) -> None:
        if value.get_secret_value():
            self._pasted[name] = value
        else:
            self._pasted.pop(name, None)
        self._recompute()
        self.send({"type": "secret_received", "name": name})  # after the rows it changed, for the view's notice

    def _discover(self) -> list[dict[str, Any]]:
        return [{**row, "error": self._short(row["error"]), "warnings": [self._short(w) for w in row["warnings"]]}
                for row in discover(self._folder)]

    def _rediscover(self) -> None:
        self.configs = self._discover()
        self.env_files_available = env_files_in(self._folder)
        known = {c["path"] for c in self.configs}
        self.selected = [p for p in self.selected if p in known]
        self._recompute()
        self.send({"type": "rescanned"})

    def _refresh_prefill(self) -> None:
        """The override fields the selected configs' flows honour, prefilled from the first one."""
        chosen = [c for c in self.configs if c["path"] in self.selected and c["valid"]]
        prefill = prefill_overrides(self._folder / chosen[0]["path"]) if chosen else {}
        specs = override_specs(c["flow"] for c in chosen) if chosen else list(OVERRIDE_SPECS)
        self._prefill = {spec["name"]: prefill.get(spec["name"], "") for spec in specs}
        self._own = dict(self._prefill)  # the config's own values (a stand-in may change what a field shows)
        fields = []
        for spec in specs:
            field = dict(spec)
            field["prefill"] = redact(str(self._prefill[spec["name"]]))
            fields.append(field)
        old_prefill = {f["name"]: f.get("prefill", "") for f in self.override_fields}
        shown = {f["name"] for f in fields}
        edited = {k: v for k, v in self.overrides.items()
                  if k in shown and v not in ("", None) and v != old_prefill.get(k, "")}
        self.override_fields = fields
        merged = dict(self._prefill)
        merged.update(self._initial_overrides)
        merged.update(edited)  # what the user typed survives a change of selection
        self.overrides = {k: ("" if v is None else v) for k, v in merged.items()}

    # ------------------------------------------------------------------ validation and preview

    def _changed_overrides(self) -> tuple[dict[str, Any], dict[str, str]]:
        """Parsed override values that differ from the config's own, plus inline errors per field."""
        values, errors = parse_overrides(self._override_values())
        prefill, _ = parse_overrides(self._prefill)
        changed = {k: v for k, v in values.items() if v != prefill.get(k) and not (v is False and k not in prefill)}
        if "dataset" in changed:
            changed["dataset"] = str(self._folder / str(changed["dataset"]))
        return changed, errors

    def _recompute(self) -> None:
        """Bring every derived trait up to date in one message: the front end never draws a new Preview
        beside a pre-flight card of the old one."""
        with self.hold_sync():
            self._recompute_held()

    def _recompute_held(self) -> None:
        changed, errors = self._changed_overrides()
        blockers = self._selection_blockers()
        prepared = self._prepare(changed, errors) if not errors else []  # none ticked: still where jobs go
        for item in prepared:
            if item.error is not None and not _is_missing_keys(item):
                field = item.error.field if isinstance(item.error, OverrideError) else None
                if field:
                    errors.setdefault(field, str(item.error))
                else:
                    blockers.append(self._short(f"{self._rel(item.path)}: {item.error}"))
        if "backend" in errors:
            blockers.append(f"Backend (step 1): {errors['backend']}")
        if set(errors) - {"backend"}:
            blockers.append("Fix the highlighted overrides.")
        self._prepared = prepared
        self.override_errors = errors
        self.secrets = [{**row, "source": self._short(row["source"]), "near": self._short(row["near"])}
                        for row in merge_secret_rows(prepared, self._folder)]
        if any(not row["found"] for row in self.secrets):
            blockers.append("Provide the missing keys: " + ", ".join(r["name"] for r in self.secrets
                                                                      if not r["found"]) + ".")
        baseline = self._baseline()
        self.previews = [preview_row(item, self._rel(item.path), self._folder, self._short, baseline)
                         for item in prepared]
        self.blockers = list(dict.fromkeys(blockers))
        self.can_submit = not self.blockers and bool(prepared) and all(p.ok for p in prepared)
        now = {p["path"]: p["preview"] for p in self.previews if p["preview"]}
        self.duplicate = bool(now) and all(self._submitted_previews.get(path) == shown for path, shown in now.items())
        self._show_preflight()
        self._show_task_url_used(prepared)

    def _show_task_url_used(self, prepared: list[Prepared]) -> None:
        """The task URL field shows the URL the send will use (``task_url_field``); one the user typed stays."""
        field = next((f for f in self.override_fields if f["name"] == "task_url"), None)
        shown = str(self.overrides.get("task_url", "") or "")
        if field is None or shown not in (str(self._own.get("task_url", "")), str(self._prefill.get("task_url", ""))):
            return
        url, hint = task_url_field(prepared, str(self._own.get("task_url", "")))
        if (shown, field["hint"]) == (url, hint):
            return
        self._prefill["task_url"] = url
        self.override_fields = [dict(f, hint=hint, prefill=redact(url)) if f is field else f
                                for f in self.override_fields]
        self.overrides = {**self.overrides, "task_url": url}

    def _baseline(self) -> Baseline | None:
        """A fork's Preview is diffed against its parent's plan (as sent to where the fork goes now)."""
        if self._fork is None:
            return None
        url = self._target.url if self._target is not None else ""
        return Baseline(f"the parent job {self._fork.job_id}", {self._rel(self._fork.config): self._fork.baseline(url)},
                        unfolded=True)

    def _selection_blockers(self) -> list[str]:
        by_path = {c["path"]: c for c in self.configs}
        blockers = [] if self.selected else ["Select at least one config."]
        for rel in self.selected:
            info = by_path.get(rel)
            if info is not None and not info["valid"]:
                blockers.append(self._short(f"{rel} is invalid: {info['error']}"))
        return blockers

    def _form_request(self, changed: dict[str, Any]) -> Request:
        """The form as the request the magic would make of the same flags (the keys pasted among its sources)."""
        valid = {c["path"] for c in self.configs if c["valid"]}
        modal = self.modal_secret.strip() if self.use_modal else ""
        return dataclasses.replace(
            self._request, folder=self._folder, configs=[self._folder / rel for rel in self.selected if rel in valid],
            env_files=[self._folder / self.env_file] if self.env_file else [], modal_secrets=[modal] if modal else [],
            backend=self._backend_value().strip() or None, overrides=changed, pasted=dict(self._pasted),
            environ=self._environ,
            fork=self._fork.job_id if self._fork is not None else None)  # a fork's jobs name it in their bundles

    def _prepare(self, changed: dict[str, Any], errors: dict[str, str]) -> list[Prepared]:
        """Every valid selected config through the pipeline; form-level problems go into ``errors``."""
        batch, problems = actions.prepare(self._form_request(changed), WIZARD_HOOKS, errors="by_field")
        errors.update({k: self._short(v) if k == "backend" else v for k, v in problems.items()})
        if batch is None:
            self._batch = None
            self.backend_url, self.backend_embedded = "", False
            return []
        self._batch = batch
        self._target = batch.target
        self.backend_url, self.backend_embedded = redact(batch.target.url), batch.target.is_embedded
        return batch.prepared

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        bundle = super()._repr_mimebundle_(**kwargs)
        data = bundle[0] if isinstance(bundle, tuple) else bundle
        if isinstance(data, dict):
            data["text/plain"] = self.text_summary()
        return bundle

    def _ipython_display_(self, **kwargs: Any) -> None:
        """Show the wizard and remember its cell: the panels of jobs submitted from it appear below it.

        Not again as the value of the ``%synth_train`` cell that displayed it already."""
        if is_shown(self):
            return
        bundle = self._repr_mimebundle_()
        data, metadata = bundle if isinstance(bundle, tuple) else (bundle, {})
        self.output.show(data, metadata)  # replaced by a static snapshot when the kernel stops
        self._cell.capture()

    def snapshot(self) -> dict[str, str]:
        """What replaces the wizard's output once it is over: what it submitted (the masked payloads and how
        to send one again), or, when its kernel stopped first, that it sent nothing."""
        if self.submitted:
            return submitted_bundle(self.submitted, self.submitted_to, self._sent_text)
        note = "synth-nb wizard, closed when its kernel stopped: nothing was submitted from it."
        return {"text/html": f"<div class='synth-wizard-snapshot'><p>{html.escape(note)}</p></div>",
                "text/plain": note}

    def text_summary(self) -> str:
        """The fallback shown where the widget cannot render (masked, like the widget itself)."""
        if not self._prepared:
            return f"synth-nb wizard ({len(self.configs)} configs found in {self.folder})"
        return redact(preview_text(self._prepared, backend_url=self._target.url if self._target else self.backend))


def _is_missing_keys(item: Prepared) -> bool:
    """Missing keys are shown on the secrets step (one row each), not repeated as a config error."""
    return isinstance(item.error, SecretsError) and bool(item.missing)


def open_wizard(request: Request, fork: Fork | None = None) -> Wizard:
    """The wizard for a magic call: its flags preselect configs and prefill overrides.

    ``fork``: start from that job's config, overrides and backend instead.
    The magic returns it, so IPython displays it as the cell's result (``_.jobs`` after submitting).
    """
    if fork is None:
        return Wizard(request.folder, preselect=request.configs, overrides=request.overrides,
                      env_files=request.env_files, modal_secrets=request.modal_secrets, backend=request.backend,
                      request=request)
    return Wizard(request.folder, preselect=[fork.config], overrides=fork.overrides, env_files=request.env_files,
                  modal_secrets=request.modal_secrets, backend=fork.backend, fork=fork, request=request)
