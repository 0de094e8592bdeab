"""Every error the local backend raises on purpose, under one root.

    LocalBackendError
    ├── ApiError                 an HTTP answer: status_code + detail (the server's 4xx/5xx JSON)
    ├── ExecutorInputError       a create body no executor can run (422; ValueError)
    │   └── RecordingNotAllowed  metadata.recording names a file outside the allowed places (400)
    ├── ExecutorUnavailable      the executor's module or a dependency is not installed (501)
    ├── JobFailed                a running job cannot finish; the message says why (the job ends failed)
    │   ├── TrainingFailed       local SFT / RL stopped (bad data, worker crash, memory limit)
    │   ├── WorkerFailed         the training worker process reported an error; ``detail`` has its log
    │   └── ReplayedFailure      the recorded job failed, so its replay fails the same way
    ├── UnknownLocalModel        a model path that is not a model folder (ValueError)
    ├── ChatDataError            an SFT file without one usable chat example (ValueError)
    ├── TaskAppError             a task app that is unreachable or answers something unusable
    ├── PolicyCallError          an upstream OpenAI-compatible model that could not answer
    ├── ModelServerError         a local model server cannot start: what to install or name (ValueError)
    ├── TaskAppRefusal           a bundled task app's own 4xx/5xx answer
    └── SharedBackendError       the backend process of a data folder cannot be started, found or stopped
        └── DataFolderError      the data folder cannot be written (read-only, no space left): a usage error

The ValueError / RuntimeError bases are kept so handlers written for those keep working. The prompt-learning
search unwinds with ``executors.prompt_learning.rollouts.SearchHalted``, which is a signal, not an error.
"""

from __future__ import annotations

import errno
from typing import Any

__all__ = [
    "ApiError",
    "ChatDataError",
    "DataFolderError",
    "ExecutorInputError",
    "ExecutorUnavailable",
    "JobFailed",
    "LocalBackendError",
    "ModelServerError",
    "PolicyCallError",
    "RecordingNotAllowed",
    "ReplayedFailure",
    "SharedBackendError",
    "TaskAppError",
    "TaskAppRefusal",
    "TrainingFailed",
    "UnknownLocalModel",
    "WorkerFailed",
    "answer_detail",
    "json_answer",
]


class LocalBackendError(Exception):
    """Root of the local backend's errors."""


class ApiError(LocalBackendError):
    """An HTTP error answered as ``{"detail": detail}`` with ``status_code``."""

    def __init__(self, status_code: int, detail: Any, headers: dict[str, str] | None = None) -> None:
        super().__init__(detail)
        self.status_code = status_code
        self.detail = detail
        self.headers = headers


class ExecutorInputError(LocalBackendError, ValueError):
    """The create-request body cannot be run by this executor; the server answers ``status_code`` with it."""

    status_code = 422


class RecordingNotAllowed(ExecutorInputError):
    """A replay asked for a file outside the bundled recordings and the configured folder."""

    status_code = 400


class ExecutorUnavailable(LocalBackendError, RuntimeError):
    """The chosen executor cannot be imported here (not written yet, or a dependency is missing)."""


class JobFailed(LocalBackendError, RuntimeError):
    """A running job cannot finish; the message says why and what to change."""


class TrainingFailed(JobFailed):
    """Local SFT or RL stopped; the message says why and what to change."""


class WorkerFailed(JobFailed):
    """Training stopped with an error; ``detail`` holds the worker's traceback or log tail."""

    def __init__(self, message: str, detail: str = "") -> None:
        super().__init__(message)
        self.detail = detail


class ReplayedFailure(JobFailed):
    """The recorded job failed; the replay fails the same way."""


class StoreClosed(LocalBackendError, RuntimeError):
    """The backend's job store was closed (the backend stopped): nothing more is read or written."""


class UnknownLocalModel(LocalBackendError, ValueError):
    """The model names a local path that is not a model folder."""


class ChatDataError(LocalBackendError, ValueError):
    """The file has no usable example; the message names the file and the first bad lines."""


class TaskAppError(LocalBackendError, RuntimeError):
    """The task app is unreachable, refused the request, or answered something unusable."""


class PolicyCallError(LocalBackendError, RuntimeError):
    """The upstream model could not answer (network error or non-200 reply)."""


class ModelServerError(LocalBackendError, ValueError):
    """A local model server cannot be started: the message is one line naming what to install or to name."""


class TaskAppRefusal(LocalBackendError):
    """A bundled task app's answer to a request it cannot serve: ``status`` and a JSON ``detail``."""

    def __init__(self, status: int, detail: Any) -> None:
        super().__init__(str(detail))
        self.status = status
        self.detail = detail


class SharedBackendError(LocalBackendError, RuntimeError):
    """The backend process of a data folder cannot be started, reached or stopped; the message says what to do."""


class DataFolderError(SharedBackendError):
    """The data folder cannot be written (read-only, not a folder, no space left): the user must fix or change it."""

    @classmethod
    def of(cls, folder: object, exc: Exception) -> DataFolderError:
        """The error for ``exc`` (an ``OSError`` or ``sqlite3.Error``) met writing in ``folder``."""
        full = getattr(exc, "errno", None) == errno.ENOSPC or getattr(exc, "sqlite_errorcode", None) == 13 or (
            "disk is full" in str(exc))
        if full:
            return cls(f"no space left on {folder}: free some space there, or choose another data folder "
                       "with --data-dir or SYNTH_NB_BACKEND_DIR")
        why = getattr(exc, "strerror", None) or exc
        return cls(f"cannot write to the backend data folder {folder} ({why}): make it writable, "
                   "or choose another with --data-dir or SYNTH_NB_BACKEND_DIR")


def answer_detail(response: Any) -> str:
    """What an error answer says: its JSON ``detail`` (or body), else the start of its text."""
    try:
        body = response.json()
    except ValueError:
        return str(response.text[:200])
    detail = body.get("detail", body) if isinstance(body, dict) else body
    return str(detail)[:300]


def json_answer(response: Any, what: str, error: type[LocalBackendError]) -> Any:
    """The JSON body of an HTTP 200 answer (an ``httpx.Response``); anything else is ``error`` saying what
    ``what`` (``"POST http://app/rollout"``) answered instead."""
    if response.status_code != 200:
        raise error(f"{what} answered HTTP {response.status_code}: {answer_detail(response)}")
    try:
        return response.json()
    except ValueError:
        raise error(f"{what} did not answer JSON: {response.text[:120]!r}") from None
