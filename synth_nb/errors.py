"""One exception hierarchy for everything synth-nb raises on purpose.

    SynthNbError
    ├── ConfigError            bad TOML, schema violations, unknown flow (file, dotted key, line)
    │   └── DatasetError       SFT JSONL problems (line numbers and fields)
    ├── SecretsError           a required key is missing, a .env file is malformed, Modal unavailable
    ├── OverrideError          an override conflicts with the config or has the wrong type
    ├── ClientError            anything that happened while talking to a backend
    │   ├── ClientClosedError  a client (or a Job on it) was used after the client was closed
    │   ├── NetworkError       connection refused/reset, timeouts (after retries)
    │   │   └── UnreachableError   the backend never answered at all: nothing was sent (exit 2)
    │   ├── BackendAnswerError an answer the client refuses: too large, nested too deep, an id that is
    │   │                      no job id, a history that never ends
    │   └── BackendError       the backend answered with an error status
    │       ├── AuthError          401 / 403
    │       ├── ValidationError    other 4xx, with the backend's own message
    │       ├── NotFoundError      404
    │       ├── RateLimitedError   429 (after retries)
    │       └── ServerError        5xx (after retries)
    └── JobError               the job ended badly
        ├── JobFailedError     terminal status failed / error
        ├── JobCancelledError  terminal status cancelled
        └── JobTimeoutError    --poll-timeout reached

Every message says what to do next. No message ever contains a secret value: build messages from
masked values only (``synth_nb.secrets.mask``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = [
    "AuthError",
    "BackendAnswerError",
    "BackendError",
    "ClientClosedError",
    "ClientError",
    "ConfigError",
    "DatasetError",
    "JobCancelledError",
    "JobError",
    "JobFailedError",
    "JobTimeoutError",
    "NetworkError",
    "NotFoundError",
    "OverrideError",
    "RateLimitedError",
    "SecretsError",
    "ServerError",
    "SynthNbError",
    "UnreachableError",
    "ValidationError",
]


class SynthNbError(Exception):
    """Base class: catch this to handle every deliberate synth-nb failure."""

    #: process exit code the CLI uses for this error
    exit_code: int = 1


class ConfigError(SynthNbError):
    """A config file is unreadable or invalid.

    ``problems`` holds one entry per problem so callers (CLI, wizard) can list them all.
    """

    exit_code = 2

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        key: str | None = None,
        line: int | None = None,
        column: int | None = None,
        hint: str | None = None,
        problems: list[ConfigError] | None = None,
    ) -> None:
        self.path = Path(path) if path is not None else None
        self.key = key
        self.line = line
        self.column = column
        self.hint = hint
        self.problems: list[ConfigError] = problems or []
        self.message = message
        super().__init__(self._render())

    def location(self) -> str:
        parts = []
        if self.path is not None:
            where = str(self.path)
            if self.line is not None:
                where += f":{self.line}"
                if self.column is not None:
                    where += f":{self.column}"
            parts.append(where)
        if self.key:
            parts.append(f"[{self.key}]")
        return " ".join(parts)

    def _render(self) -> str:
        loc = self.location()
        text = f"{loc}: {self.message}" if loc else self.message
        if self.hint:
            text += f" ({self.hint})"
        for sub in self.problems:
            text += "\n  - " + str(sub)
        return text

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": str(self.path) if self.path else None,
            "key": self.key,
            "line": self.line,
            "column": self.column,
            "message": self.message,
            "hint": self.hint,
        }


class DatasetError(ConfigError):
    """An SFT dataset is missing or has invalid lines."""


class SecretsError(SynthNbError):
    """A required secret is missing or a secrets source is unusable."""

    exit_code = 2


class OverrideError(SynthNbError):
    """A command-line / wizard override is invalid or conflicts with the config.

    ``field`` names the override it is about (``"model"``, ``"task_url"``, ``"backend"``...), so a form
    can flag that field without reading the message.
    """

    exit_code = 2

    def __init__(self, message: str, *, field: str | None = None) -> None:
        self.field = field
        super().__init__(message)


class ClientError(SynthNbError):
    """Talking to a backend failed."""


class ClientClosedError(ClientError):
    """A closed client, or a ``Job`` whose client was closed, was asked to reach the backend."""

    def __init__(self, message: str | None = None, *, job_id: str | None = None, base_url: str = "") -> None:
        self.job_id = job_id
        self.base_url = base_url
        super().__init__(message or _closed_message(job_id, base_url))


def _closed_message(job_id: str | None, base_url: str) -> str:
    where = f" for {base_url}" if base_url else ""
    if job_id:
        return (f"job {job_id}: its client{where} was closed, so this handle can no longer reach the backend; "
                f"get a live handle with `%synth_train --attach {job_id}` in a notebook or "
                f"`synth-nb attach {job_id}` in a terminal")
    return (f"the Synth client{where} was closed; create a new client, or get a live job handle with "
            "`%synth_train --attach JOB_ID` in a notebook or `synth-nb attach JOB_ID` in a terminal")


class NetworkError(ClientError):
    """The backend could not be reached (after retries)."""


class UnreachableError(NetworkError):
    """No answer ever came from the backend (connection refused, no such host): nothing was sent to it, so
    the command ends as a usage problem would (exit 2): the URL, the network or the backend is to fix."""

    exit_code = 2


class BackendAnswerError(ClientError):
    """The backend answered something the client will not use: an answer larger or nested deeper than the
    client's bounds, an id that is no job id (it would become a path), a history that never ends."""


class BackendError(ClientError):
    """The backend answered with an error status."""

    def __init__(self, message: str, *, status_code: int, method: str = "", url: str = "",
                 body: Any = None) -> None:
        self.status_code = status_code
        self.method = method
        self.url = url
        self.body = body
        super().__init__(message)


class AuthError(BackendError):
    """401/403: the API key is missing, wrong, or lacks permission."""


class ValidationError(BackendError):
    """The backend rejected the request (4xx other than 401/403/404/429)."""


class NotFoundError(BackendError):
    """404: the job, file or endpoint does not exist on this backend."""


class RateLimitedError(BackendError):
    """429 persisted through every retry."""


class ServerError(BackendError):
    """5xx persisted through every retry."""


class JobError(SynthNbError):
    """A submitted job did not succeed."""

    def __init__(self, message: str, *, job_id: str | None = None, status: str | None = None) -> None:
        self.job_id = job_id
        self.status = status
        super().__init__(message)


class JobFailedError(JobError):
    """The job reached status failed or error."""


class JobCancelledError(JobError):
    """The job was cancelled."""


class JobTimeoutError(JobError):
    """The job did not reach a terminal state within the poll timeout."""


#: errors a long-running watcher or a cancel rides out (after the per-request retries gave up); a tuple of the
#: classes above, so not in ``__all__`` (which lists the classes), and re-exported by ``synth_nb.client``
TRANSIENT_ERRORS = (NetworkError, ServerError, RateLimitedError)
