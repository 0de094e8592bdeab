"""The async client for the Synth backend contract (files, learning/RL/prompt-learning jobs, streams).

Modelled on httpx: one ``httpx.AsyncClient`` underneath, an injectable ``transport=`` for tests,
retries in ``_retry``, error mapping in ``_errors`` and streaming in ``_stream``.
"""

from __future__ import annotations

import platform
import uuid
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import httpx

from synth_nb import __version__
from synth_nb.client._errors import error_for_response, network_error
from synth_nb.client._parse import extract_list, parse_events_body, parse_metrics
from synth_nb.client._retry import RetryableStatus, RetryPolicy
from synth_nb.contract import FlowEndpoints
from synth_nb.errors import ConfigError, NotFoundError, ValidationError
from synth_nb.records import Event, MetricPoint
from synth_nb.secrets._mask import mask

__all__ = ["AsyncSynthClient", "FlowRef", "endpoints_for", "normalize_backend_url"]

FlowRef = str | FlowEndpoints


def normalize_backend_url(url: str) -> str:
    """``http://host[:port][/api][/v1][/]`` -> ``http://host[:port]/api`` (the /api suffix rule)."""
    raw = (url or "").strip()
    if not raw.startswith(("http://", "https://")):
        raise ConfigError(
            f"backend URL {raw!r} must start with http:// or https://",
            key="backend", hint="e.g. --backend http://127.0.0.1:8000",
        )
    base = raw.rstrip("/")
    if base.endswith("/v1") and "/api" in base:
        base = base[: -len("/v1")]
    if not base.endswith("/api"):
        base += "/api"
    return base


def endpoints_for(flow: FlowRef) -> FlowEndpoints:
    if isinstance(flow, FlowEndpoints):
        return flow
    from synth_nb.flows import get_flow

    try:
        endpoints: FlowEndpoints = get_flow(flow).ENDPOINTS
        return endpoints
    except KeyError as exc:
        raise ConfigError(str(exc.args[0]), key="flow") from None


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
    ) -> None:
        self.base_url = normalize_backend_url(base_url)
        self._api_key = api_key or ""
        self.max_attempts = max_attempts
        self.timeout = timeout
        self.sse_read_timeout = sse_read_timeout
        self.user_agent = f"synth-nb/{__version__} httpx/{httpx.__version__} python/{platform.python_version()}"
        headers = {"User-Agent": self.user_agent, "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        self._http = httpx.AsyncClient(
            transport=transport, timeout=httpx.Timeout(timeout), headers=headers, follow_redirects=True,
        )
        #: per-(kind, job) path that answered last time, so fallbacks are probed once
        self._working_paths: dict[tuple[str, str], str] = {}

    def __repr__(self) -> str:
        return f"AsyncSynthClient(base_url={self.base_url!r}, api_key={mask(self._api_key)!r})"

    @property
    def http(self) -> httpx.AsyncClient:
        return self._http

    @property
    def secrets(self) -> list[str]:
        return [self._api_key] if self._api_key else []

    async def __aenter__(self) -> AsyncSynthClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    def url_for(self, path: str) -> str:
        """Absolute URL for a contract path; a leading ``/api`` is not doubled."""
        if path.startswith(("http://", "https://")):
            return path
        if path.startswith("/api/") or path == "/api":
            path = path[len("/api"):]
        return f"{self.base_url}/{path.lstrip('/')}"

    # -- core request ---------------------------------------------------------------------------

    async def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        idempotency_key: str | None = None,
        timeout: float | None = None,
        files: Any = None,
        data: Mapping[str, Any] | None = None,
    ) -> httpx.Response:
        """Send one request with retries; return the 2xx response or raise a ``ClientError``."""
        method = method.upper()
        url = self.url_for(path)
        all_headers = dict(headers or {})
        if idempotency_key:
            all_headers["Idempotency-Key"] = idempotency_key
        policy = RetryPolicy(
            attempts=self.max_attempts,
            replay_safe=method in ("GET", "HEAD", "OPTIONS", "PUT", "DELETE") or bool(idempotency_key),
        )
        kwargs: dict[str, Any] = {"params": params, "headers": all_headers}
        if json is not None:
            kwargs["json"] = json
        if files is not None:
            kwargs["files"] = files
        if data is not None:
            kwargs["data"] = data
        if timeout is not None:
            kwargs["timeout"] = httpx.Timeout(timeout)
        try:
            async for attempt in policy.context():
                with attempt:
                    response = await self._http.request(method, url, **kwargs)
                    if response.status_code == 429 or response.status_code >= 500:
                        await response.aread()
                        raise RetryableStatus(response)
        except RetryableStatus as exc:
            raise error_for_response(exc.response, secrets=self.secrets) from None
        except httpx.TransportError as exc:
            raise network_error(exc, method, url, secrets=self.secrets) from None
        if response.status_code >= 400:
            raise error_for_response(response, secrets=self.secrets)
        return response

    async def request_json(
        self,
        method: str,
        path: str,
        json: Any = None,
        params: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        idempotency_key: str | None = None,
        *,
        timeout: float | None = None,
    ) -> Any:
        """Like ``request`` but returns the decoded JSON body (``{}`` for an empty body)."""
        response = await self.request(
            method, path, json=json, params=params, headers=headers, idempotency_key=idempotency_key,
            timeout=timeout,
        )
        return _json_body(response)

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
        body = _json_body(response)
        if not isinstance(body, dict) or not body.get("id"):
            raise ValidationError(
                f"upload of {path.name} returned no file id (got {str(body)[:200]!r})",
                status_code=response.status_code, method="POST", url=self.url_for(endpoint), body=body,
            )
        return body

    async def get_file(self, file_id: str) -> dict[str, Any]:
        return _as_dict(await self.request_json("GET", f"/files/{file_id}"))

    async def list_files(self, *, purpose: str | None = None, limit: int = 20) -> list[dict[str, Any]]:
        params: dict[str, Any] = {"limit": limit}
        if purpose:
            params["purpose"] = purpose
        data = await self.request_json("GET", "/files", params=params)
        return [f for f in extract_list(data, "files") or extract_list(data, "data") if isinstance(f, dict)]

    # -- jobs -----------------------------------------------------------------------------------

    async def create_job(self, flow: FlowRef, body: Any, *, idempotency_key: str | None = None) -> dict[str, Any]:
        """Create a job; retried only with an Idempotency-Key (one is generated when not given)."""
        key = idempotency_key or uuid.uuid4().hex
        ep = endpoints_for(flow)
        return _as_dict(await self.request_json("POST", ep.create, json=body, idempotency_key=key, timeout=180.0))

    async def _first_working(self, kind: str, job_id: str, paths: list[str], **kwargs: Any) -> httpx.Response:
        """GET the first path that does not 404 (remembering it); raise the primary 404 otherwise."""
        cache_key = (kind, job_id)
        remembered = self._working_paths.get(cache_key)
        ordered = [remembered] + [p for p in paths if p != remembered] if remembered else paths
        first_error: NotFoundError | None = None
        for template in ordered:
            try:
                result = await self.request("GET", template.replace("{job_id}", job_id), **kwargs)
            except NotFoundError as exc:
                first_error = first_error or exc
                continue
            self._working_paths[cache_key] = template
            return result
        assert first_error is not None
        raise first_error

    async def get_status(self, flow: FlowRef, job_id: str) -> dict[str, Any]:
        """The job's status document (primary path, then the flow's fallback status paths)."""
        ep = endpoints_for(flow)
        return _as_dict(_json_body(await self._first_working("status", job_id, [ep.status, *ep.fallback_status])))

    async def get_events(self, flow: FlowRef, job_id: str, since_seq: int = 0, limit: int = 200) -> list[Event]:
        """Events with ``seq > since_seq``, ascending (primary path, then fallback event paths)."""
        ep = endpoints_for(flow)
        response = await self._first_working(
            "events", job_id, [ep.events, *ep.fallback_events], params={"since_seq": since_seq, "limit": limit}
        )
        return parse_events_body(response.content)

    async def get_metrics(
        self, flow: FlowRef, job_id: str, *, after_step: int | None = None, name: str | None = None,
        limit: int = 1000,
    ) -> list[MetricPoint]:
        """Metric points; without ``after_step`` the backend returns the newest ``limit`` points."""
        ep = endpoints_for(flow)
        params: dict[str, Any] = {"limit": limit}
        if after_step is not None:
            params["after_step"] = after_step
        if name:
            params["name"] = name
        data = await self.request_json("GET", ep.metrics.replace("{job_id}", job_id), params=params)
        return parse_metrics(extract_list(data, "points"))

    async def get_timeline(self, flow: FlowRef, job_id: str) -> list[dict[str, Any]]:
        ep = endpoints_for(flow)
        if not ep.timeline:
            return []
        data = await self.request_json("GET", ep.timeline.replace("{job_id}", job_id))
        return [e for e in extract_list(data, "events") or extract_list(data, "timeline") if isinstance(e, dict)]

    async def cancel(self, flow: FlowRef, job_id: str) -> dict[str, Any]:
        """Ask the backend to cancel (safe to repeat, so retried)."""
        ep = endpoints_for(flow)
        return _as_dict(await self.request_json(
            "POST", ep.cancel.replace("{job_id}", job_id), json={}, idempotency_key=f"cancel-{job_id}"
        ))

    async def start(self, flow: FlowRef, job_id: str) -> dict[str, Any]:
        ep = endpoints_for(flow)
        if not ep.start:
            return {}
        return _as_dict(await self.request_json(
            "POST", ep.start.replace("{job_id}", job_id), json={}, idempotency_key=f"start-{job_id}"
        ))

    async def list_jobs(self, flow: FlowRef, *, limit: int = 20) -> list[dict[str, Any]]:
        ep = endpoints_for(flow)
        data = await self.request_json("GET", ep.create, params={"limit": limit})
        return [j for j in extract_list(data, "jobs") if isinstance(j, dict)]

    async def verify_task_app(self, endpoint_base_url: str) -> dict[str, Any]:
        return _as_dict(await self.request_json(
            "POST", "/rl/verify_task_app", json={"endpoint_base_url": endpoint_base_url}, timeout=60.0,
        ))

    def stream_events(
        self, flow: FlowRef, job_id: str, since_seq: int = 0, **options: Any
    ) -> AsyncIterator[Event]:
        """Events as they happen: SSE when the backend offers it, else adaptive polling (see ``_stream``)."""
        from synth_nb.client._stream import EventStream

        return EventStream(self, flow, job_id, since_seq=since_seq, **options).__aiter__()


def _json_body(response: httpx.Response) -> Any:
    if not response.content:
        return {}
    try:
        return response.json()
    except ValueError:
        return {"raw": response.text[:1000]}


def _as_dict(data: Any) -> dict[str, Any]:
    return data if isinstance(data, dict) else {"data": data}


def _content_type(path: Path) -> str:
    return {".jsonl": "application/jsonl", ".json": "application/json", ".txt": "text/plain"}.get(
        path.suffix.lower(), "application/octet-stream"
    )
