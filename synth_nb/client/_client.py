"""The async client for the Synth backend contract (file uploads, jobs of any flow, streams).

Modelled on httpx: one ``httpx.AsyncClient`` underneath, an injectable ``transport=`` for tests,
retries in ``_retry``, error mapping in ``_errors`` and streaming in ``_stream``. The client knows no
flow: every job call takes the flow's ``FlowEndpoints`` (backend paths as data) from the caller.
"""

from __future__ import annotations

import asyncio
import dataclasses
import platform
import re
import uuid
from collections.abc import Awaitable, Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, TypedDict, TypeVar, Unpack
from urllib.parse import quote

import httpx

from synth_nb._version import __version__
from synth_nb.backend import display_url, normalize_backend_url
from synth_nb.client._bounds import send_bounded
from synth_nb.client._lenient import extract_list
from synth_nb.client._parse import (
    EventRecord,
    MetricRecord,
    SeqNumbering,
    StepNumbering,
    parse_event_records,
    parse_metrics_body,
)
from synth_nb.client._reach import NOT_ANSWERED, Reachability
from synth_nb.client._retry import ErrorStatus, RetryPolicy, with_retries
from synth_nb.client._shared import as_dict, contract_url, json_body, path_segment, split_credentials
from synth_nb.client._tls import tls_context
from synth_nb.contract import FlowEndpoints
from synth_nb.errors import ClientClosedError, ConfigError, NotFoundError, ValidationError
from synth_nb.records import Event, MetricPoint
from synth_nb.secrets._mask import mask

#: an events page's closing cursor, ``"next_seq": N}``, as the contract's object answer may end
_NEXT_SEQ = re.compile(rb'"next_seq"\s*:\s*(\d{1,19})\s*\}\s*\Z')

__all__ = ["AsyncSynthClient", "RequestOptions"]

T = TypeVar("T")


class RequestOptions(TypedDict, total=False):
    """What any request may add: query parameters, headers, an Idempotency-Key (which makes a POST safe
    to retry) and a timeout in seconds."""

    params: Mapping[str, Any] | None
    headers: Mapping[str, str] | None
    idempotency_key: str | None
    timeout: float | None


class AsyncSynthClient:
    """Bearer-authenticated client; every request retried per ``RetryPolicy`` and mapped to our errors."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        timeout: float = 30.0,
        max_attempts: int = 6,
        sse_read_timeout: float = 60.0,
        answered_before: bool = False,
    ) -> None:
        self.base_url = normalize_backend_url(base_url)
        #: requests go to the URL without its credentials, which travel as basic auth instead: so httpx's
        #: logs and errors never hold them
        self._request_base, auth = _split_credentials(self.base_url)
        self._api_key = api_key or ""
        self.max_attempts = max_attempts
        self.timeout = timeout
        self.sse_read_timeout = sse_read_timeout
        self.user_agent = f"synth-nb/{__version__} httpx/{httpx.__version__} python/{platform.python_version()}"
        headers = {"User-Agent": self.user_agent, "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        options: dict[str, Any] = {"transport": transport, "timeout": httpx.Timeout(timeout), "headers": headers,
                                   "follow_redirects": True, "auth": auth, "verify": tls_context()}
        self._http = httpx.AsyncClient(**options)
        self._http_options = options
        self._stream_http: httpx.AsyncClient | None = None
        #: per-(kind, job) path that answered last time, so fallbacks are probed once
        self._working_paths: dict[tuple[str, str], str] = {}
        #: per job: the seqs given to events the backend sent without one
        self._numbering: dict[str, SeqNumbering] = {}
        #: per job: the steps given to metric points the backend sent without one
        self._steps: dict[str, StepNumbering] = {}
        #: ``answered_before``: a clone of a client the backend answered gets the full retry budget at once
        self._reach = Reachability(answered_before=answered_before)

    def __repr__(self) -> str:
        return f"AsyncSynthClient(base_url={self.shown_url!r}, api_key={mask(self._api_key)!r})"

    @property
    def shown_url(self) -> str:
        """``base_url`` as it may be shown or stored: credentials in it masked."""
        return display_url(self.base_url)

    @property
    def unreachable_since(self) -> datetime | None:
        """When requests stopped getting an answer from the backend (``None`` while they get one)."""
        return self._reach.since

    def clone(self, *, transport: httpx.AsyncBaseTransport | None = None) -> AsyncSynthClient:
        """A new client with this one's URL, key and options and its own connection pool.

        Connections belong to the event loop that opened them, so a job moving to another loop needs a
        clone. A custom transport is not carried over (it may hold this client's pool): pass one here.
        """
        return AsyncSynthClient(self.base_url, self._api_key, transport=transport, timeout=self.timeout,
                                max_attempts=self.max_attempts, sse_read_timeout=self.sse_read_timeout,
                                answered_before=self._reach.ever_answered)

    @property
    def http(self) -> httpx.AsyncClient:
        return self._http

    @property
    def stream_http(self) -> httpx.AsyncClient:
        """The connection pool for long-lived event streams (made on first use; requests use ``http``).

        Streams get a pool of their own: httpcore 1.0 counts busy connections as idle ones when it trims the
        keep-alive pool, so with 20 streams open in a shared pool every status and metrics poll paid a new
        TCP connection (on both sides) that was closed again after one request.
        """
        if self._http.is_closed:
            return self._http  # closed: using it fails as every other request does
        if self._stream_http is None:
            self._stream_http = httpx.AsyncClient(**self._http_options)
        return self._stream_http

    @property
    def closed(self) -> bool:
        """True after ``aclose()``: every later request raises ``ClientClosedError``."""
        return self._http.is_closed

    def secret_values(self) -> list[str]:
        """What nothing built from this client's answers may show: its key."""
        return [self._api_key] if self._api_key else []

    @property
    def sse_timeout(self) -> httpx.Timeout:
        """Timeouts for one event-stream connection: the usual ones, but a longer wait between frames."""
        return httpx.Timeout(self.timeout, read=self.sse_read_timeout)

    async def __aenter__(self) -> AsyncSynthClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()
        if self._stream_http is not None:
            await self._stream_http.aclose()

    def job_path(self, template: str, job_id: str) -> str:
        """``template`` with ``{job_id}`` filled in, the id percent-encoded (a job id is one path segment;
        one that is refused as a job id can still be named in a cancel)."""
        return template.replace("{job_id}", path_segment(job_id))

    def url_for(self, path: str) -> str:
        """Absolute URL for a contract path; a leading ``/api`` is not doubled."""
        return contract_url(self._request_base, path)

    # -- core request ---------------------------------------------------------------------------

    async def retrying(self, method: str, url: str, send: Callable[[], Awaitable[T]], *,
                       replay_safe: bool = True, wait_max: float | None = None) -> T:
        """Run ``send`` (one attempt, raising ``ErrorStatus`` for an error response) with this client's retries."""
        if self.closed:
            raise ClientClosedError(base_url=self.shown_url)
        policy = RetryPolicy(attempts=self.max_attempts, replay_safe=replay_safe,
                             first_contact=not self._reach.ever_answered)
        if wait_max is not None:
            policy = dataclasses.replace(policy, wait_max=wait_max)

        async def attempt() -> T:
            try:
                result = await send()
            except ErrorStatus as exc:
                self._reach.answered(exc.response.status_code)
                raise
            except NOT_ANSWERED:
                self._reach.failed()
                raise
            self._reach.answered()
            return result

        try:
            return await with_retries(attempt, policy, method=method, url=url, secrets=self.secret_values())
        except RuntimeError:  # httpx: "Cannot send a request, as the client has been closed."
            if self.closed:
                raise ClientClosedError(base_url=self.shown_url) from None
            raise

    async def request(self, method: str, path: str, *, json: Any = None, files: Any = None,
                      data: Mapping[str, Any] | None = None,
                      **options: Unpack[RequestOptions]) -> httpx.Response:
        """Send one request with retries; return the 2xx response or raise a ``ClientError``."""
        method = method.upper()
        url = self.url_for(path)
        idempotency_key, timeout = options.get("idempotency_key"), options.get("timeout")
        all_headers = dict(options.get("headers") or {})
        if idempotency_key:
            all_headers["Idempotency-Key"] = idempotency_key
        kwargs: dict[str, Any] = {"params": options.get("params"), "headers": all_headers}
        if json is not None:
            kwargs["json"] = json
        if files is not None:
            kwargs["files"] = files
        if data is not None:
            kwargs["data"] = data
        if timeout is not None:
            kwargs["timeout"] = httpx.Timeout(timeout)

        async def send() -> httpx.Response:
            response = await send_bounded(self._http, self._http.build_request(method, url, **kwargs),
                                          timeout if timeout is not None else self.timeout)
            if response.status_code >= 400:
                raise ErrorStatus(response)
            return response

        replay_safe = method in ("GET", "HEAD", "OPTIONS", "PUT", "DELETE") or bool(idempotency_key)
        return await self.retrying(method, url, send, replay_safe=replay_safe)

    async def request_json(self, method: str, path: str, json: Any = None,
                           **options: Unpack[RequestOptions]) -> Any:
        """Like ``request`` but returns the decoded JSON body (``{}`` for an empty body)."""
        return json_body(await self.request(method, path, json=json, **options))

    # -- files ----------------------------------------------------------------------------------

    async def upload_file(
        self,
        path: str | Path,
        purpose: str = "fine-tune",
        limit_lines: int | None = None,
        *,
        endpoint: str = "/files",
        fields: Mapping[str, Any] | None = None,
        idempotency_key: str | None = None,
    ) -> dict[str, Any]:
        """Multipart upload (``file`` + ``purpose``); ``limit_lines`` sends only the first N lines."""
        path = Path(path)
        try:
            content = path.read_bytes()
        except OSError as exc:
            raise ConfigError(f"cannot read upload file: {exc.strerror or exc}", path=path) from None
        if limit_lines is not None:
            lines = [ln for ln in content.splitlines(keepends=True) if ln.strip()]
            content = b"".join(lines[: max(0, int(limit_lines))])
        form = {"purpose": purpose}
        form.update({k: str(v) for k, v in (fields or {}).items() if v is not None})
        response = await self.request(
            "POST", endpoint, files={"file": (path.name, content, _content_type(path))}, data=form,
            idempotency_key=idempotency_key or f"upload-{uuid.uuid4().hex}", timeout=max(self.timeout, 300.0),
        )
        body = json_body(response)
        if not isinstance(body, dict) or not body.get("id"):
            raise ValidationError(
                f"upload of {path.name} returned no file id (got {str(body)[:200]!r})",
                status_code=response.status_code, method="POST", url=self.url_for(endpoint), body=body,
            )
        return body

    # -- jobs -----------------------------------------------------------------------------------

    async def create_job(self, endpoints: FlowEndpoints, body: Any, *,
                         idempotency_key: str | None = None) -> dict[str, Any]:
        """Create a job; retried only with an Idempotency-Key (one is generated when not given)."""
        key = idempotency_key or uuid.uuid4().hex
        return as_dict(await self.request_json("POST", endpoints.create, json=body, idempotency_key=key,
                                               timeout=180.0))

    async def _first_working(self, kind: str, job_id: str, paths: list[str], **kwargs: Any) -> httpx.Response:
        """GET the first path that does not 404 (remembering it); raise the primary 404 otherwise."""
        cache_key = (kind, job_id)
        remembered = self._working_paths.get(cache_key)
        ordered = [remembered] + [p for p in paths if p != remembered] if remembered else paths
        first_error: NotFoundError | None = None
        for template in ordered:
            try:
                result = await self.request("GET", self.job_path(template, job_id), **kwargs)
            except NotFoundError as exc:
                first_error = first_error or exc
                continue
            self._working_paths[cache_key] = template
            return result
        assert first_error is not None
        raise first_error

    async def get_status(self, endpoints: FlowEndpoints, job_id: str) -> dict[str, Any]:
        """The job's status document (primary path, then the flow's fallback status paths)."""
        paths = [endpoints.status, *endpoints.fallback_status]
        return as_dict(json_body(await self._first_working("status", job_id, paths)))

    async def get_events(self, endpoints: FlowEndpoints, job_id: str, since_seq: int = 0,
                         limit: int = 200) -> list[Event]:
        """Events with ``seq > since_seq``, ascending (primary path, then fallback event paths)."""
        return [r.to_event() for r in await self.get_event_records(endpoints, job_id, since_seq, limit)]

    async def get_event_records(self, endpoints: FlowEndpoints, job_id: str, since_seq: int = 0,
                                limit: int = 200, *, ahead: Callable[[int], object] | None = None
                                ) -> list[EventRecord]:
        """Like ``get_events``, as compact records (no pydantic model per event: what a history keeps).

        ``ahead``: called with the answer's ``next_seq`` (the contract's optional cursor, told from the answer's
        end) before the answer is read, when it states one past ``since_seq``: a reader of every page may ask
        for the next one then, so the backend makes it meanwhile."""
        paths = [endpoints.events, *endpoints.fallback_events]
        response = await self._first_working("events", job_id, paths,
                                             params={"since_seq": since_seq, "limit": limit})
        raw = response.content
        if ahead is not None and (told := _NEXT_SEQ.search(raw, max(0, len(raw) - 64))) is not None:
            cursor = int(told.group(1))
            if since_seq < cursor < 2**63:
                ahead(cursor)
                await asyncio.sleep(0)  # the request it makes goes out before this page is read
        return parse_event_records(raw, since_seq, self.numbering(job_id))

    def numbering(self, job_id: str) -> SeqNumbering:
        """The seqs given so far to ``job_id``'s events that came without one (shared with its SSE frames)."""
        return self._numbering.setdefault(job_id, SeqNumbering())

    async def get_metrics(
        self, endpoints: FlowEndpoints, job_id: str, *, after_step: int | None = None, name: str | None = None,
        limit: int = 1000,
    ) -> list[MetricPoint]:
        """Metric points (primary path, then the flow's fallback metric paths); without ``after_step`` the
        backend returns the newest ``limit`` points."""
        records = await self.get_metric_records(endpoints, job_id, after_step=after_step, name=name, limit=limit)
        return [r.to_point() for r in records]

    async def get_metric_records(
        self, endpoints: FlowEndpoints, job_id: str, *, after_step: int | None = None, name: str | None = None,
        limit: int = 1000,
    ) -> list[MetricRecord]:
        """Like ``get_metrics``, as compact records."""
        params: dict[str, Any] = {"limit": limit}
        if after_step is not None:
            params["after_step"] = after_step
        if name:
            params["name"] = name
        paths = [endpoints.metrics, *endpoints.fallback_metrics]
        response = await self._first_working("metrics", job_id, paths, params=params)
        return parse_metrics_body(response.content, self._steps.setdefault(job_id, StepNumbering()))

    async def get_timeline(self, endpoints: FlowEndpoints, job_id: str) -> list[Any]:
        """The job's timeline entries as sent (primary path, then fallbacks); ``[]`` for a flow without one.
        The list is found under ``events`` (what 0.2.24's streamer reads) or ``timeline``."""
        if not endpoints.timeline:
            return []
        response = await self._first_working("timeline", job_id, [endpoints.timeline, *endpoints.fallback_timeline])
        data = json_body(response)
        return extract_list(data, "events") or extract_list(data, "timeline")

    async def cancel(self, endpoints: FlowEndpoints, job_id: str) -> dict[str, Any]:
        """Ask the backend to cancel (safe to repeat, so retried)."""
        return as_dict(await self.request_json(
            "POST", self.job_path(endpoints.cancel, job_id), json={}, idempotency_key=f"cancel-{quote(job_id)}"
        ))

    async def start(self, endpoints: FlowEndpoints, job_id: str) -> dict[str, Any]:
        """Start a job created stopped (SFT); a no-op for flows without a start path."""
        if not endpoints.start:
            return {}
        return as_dict(await self.request_json(
            "POST", self.job_path(endpoints.start, job_id), json={}, idempotency_key=f"start-{job_id}"
        ))

    async def list_jobs(self, endpoints: FlowEndpoints, *, limit: int = 20) -> list[dict[str, Any]]:
        data = await self.request_json("GET", endpoints.create, params={"limit": limit})
        return [j for j in extract_list(data, "jobs") if isinstance(j, dict)]


def _split_credentials(url: str) -> tuple[str, httpx.BasicAuth | None]:
    """``http://user:pw@host/api`` -> (``http://host/api``, basic auth for user/pw)."""
    bare, credentials = split_credentials(url)
    return bare, httpx.BasicAuth(*credentials) if credentials is not None else None


def _content_type(path: Path) -> str:
    return {".jsonl": "application/jsonl", ".json": "application/json", ".txt": "text/plain"}.get(
        path.suffix.lower(), "application/octet-stream"
    )
