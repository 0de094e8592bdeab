"""The wizard's Submit: the magic's ``--yes`` sequence from a button press (``actions.send`` on the batch its form
prepared, then ``show_live``: the follow stage and one panel per job, as the request's flags say).

A mixin of ``synth_nb.notebook.wizard.Wizard``: the form's state is the wizard's; what Submit changes is the
trait the front end shows (``submitting``, ``submit_error``, ``submitted``, ``step``) and the jobs it holds.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from synth_nb.errors import SynthNbError
from synth_nb.notebook.launch import show_live
from synth_nb.notebook.wizard_review import load_last, save_last
from synth_nb.pipeline import actions
from synth_nb.pipeline.preview import preview_text
from synth_nb.secrets.redact import redact

if TYPE_CHECKING:
    from synth_nb.notebook.kernel_loop import KernelLoop
    from synth_nb.notebook.live_output import LiveOutput
    from synth_nb.notebook.output_redirect import CellContext
    from synth_nb.pipeline.request import Request

__all__ = ["SubmitStep"]


class SubmitStep:
    """Submit, on the kernel's loop: the same payloads again only when asked for."""

    _batch: actions.Batch | None
    _request: Request
    _loop: KernelLoop
    _cell: CellContext
    _folder: Path
    _on_submitted: Any
    _submitted_previews: dict[str, str]
    _sent_text: str
    output: LiveOutput
    jobs: list[Any]
    panels: list[Any]
    submit_task: asyncio.Future[Any] | None
    submitting: bool
    submit_error: str
    can_submit: bool
    duplicate: bool
    blockers: list[str]
    previews: list[dict[str, Any]]
    submitted: list[dict[str, str]]
    submitted_to: str
    step: str

    if TYPE_CHECKING:  # the wizard's own
        def _recompute(self) -> None: ...

        def _rel(self, path: Path | str) -> str: ...

    def _start_submit(self, duplicate: bool = False) -> None:
        """Submit what the preview shows; the same payloads again only when asked for (``duplicate``)."""
        self._recompute()
        if self.submitting:
            return
        if not self.can_submit:
            self.submit_error = "Nothing was sent: " + " ".join(self.blockers) if self.blockers else ""
            return
        if self.duplicate and not duplicate:
            self.submit_error = ("Nothing was sent: these are the payloads last submitted from this notebook. "
                                 "Use \"Submit the same again…\" to send them once more.")
            return
        self.submitting = True
        self.submit_error = ""
        assert self._batch is not None  # can_submit needs prepared configs, which need a target
        self.submit_task = self._loop.loop.create_task(self._submit(self._batch))

    async def _submit(self, batch: actions.Batch) -> list[Any]:
        prepared, target, request = batch.prepared, batch.target, self._request
        submitting = actions.send(batch, request, say=print)
        try:  # what it prints (task-app checks) belongs to the wizard's cell
            jobs = await self._cell.create_task(self._loop.loop, submitting)
        except SynthNbError as exc:
            self.submit_error = str(exc)
            return []
        except Exception as exc:  # keep the panel alive; the message is already masked by the client
            self.submit_error = f"{type(exc).__name__}: {exc}"
            return []
        finally:
            self.submitting = False
        self.jobs = jobs
        sent = {p["path"]: p["preview"] for p in self.previews if p["preview"]}
        save_last(self._folder, sent)
        self._submitted_previews = load_last(self._folder)
        self._sent_text = redact(preview_text(prepared, backend_url=target.url))
        self.submitted = [{"job_id": str(job.id), "flow": str(job.flow), "path": self._rel(p.path)}
                          for job, p in zip(jobs, prepared, strict=False)]
        self.submitted_to = redact(target.url)
        self.step = "submit"
        self._recompute()
        self.output.freeze()  # the wizard is over: what it sent stays as static output, saved with the notebook
        # then, as plain outputs of its cell, one panel per job (the magic's --yes path does the same)
        self.panels = self._cell.run(show_live, jobs, request, secrets=batch.secrets(),
                                     panels=self._on_submitted is None)
        if self._on_submitted is not None:
            self._on_submitted(jobs)
        return jobs
