"""A blocking client on the standard library's HTTP client, for a command that sends a request or two and ends.

``synth-nb cancel JOB_ID`` reads a status, sends a cancel and reads the status again: importing httpx, asyncio
and stamina cost it more CPU than the whole command may spend (``benchmarks/cli_start.py``). ``PlainClient``
offers what it needs (``get_status`` with the flow's fallback paths, ``cancel``) under the contract of
``AsyncSynthClient``: the same headers and credentials (a bearer key; a URL's ``user:password`` as basic auth),
the same bounds on an answer (size, nesting depth, the time it takes to arrive: ``_shared``), the same retries
(attempts, backoff, ``Retry-After``, the 2 s first-contact rule; a POST only with an ``Idempotency-Key``), the same
errors (``_errors``) and the same trusted certificates (``_tls``). Redirects are followed as httpx follows them.

What it leaves to httpx: proxies. ``PlainClient.serves(url)`` is False when the environment names a proxy for
the URL (``HTTP(S)_PROXY``, ``ALL_PROXY``, not bypassed by ``NO_PROXY``), and the caller uses ``AsyncSynthClient``
then. It sends no ``Accept-Encoding`` (answers come uncompressed), speaks HTTP/1.1 only, and opens one
connection per request (a command sends a handful).
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import random
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urljoin, urlsplit

from synth_nb._version import __version__
from synth_nb.backend import display_url, normalize_backend_url
from synth_nb.client._errors import error_for_response, network_error
from synth_nb.client._shared import (
    FIRST_CONTACT_RETRY,
    FIRST_CONTACT_SECONDS,
    MAX_ANSWER_BYTES,
    MAX_DEPTH,
    MAX_REDIRECTS,
    RETRY_ATTEMPTS,
    RETRY_WAIT_INITIAL,
    RETRY_WAIT_MAX,
    answer_seconds,
    as_dict,
    contract_url,
    json_body,
    parse_retry_after,
    path_segment,
    split_credentials,
    too_deep,
)
from synth_nb.contract import FlowEndpoints
from synth_nb.errors import BackendAnswerError, NotFoundError
from synth_nb.secrets._mask import mask, mask_userinfo

__all__ = ["PlainAnswer", "PlainClient"]

_REDIRECTS = frozenset({301, 302, 303, 307, 308})
#: statuses retried (as httpx's client retries them under ``_retry.RetryPolicy``)
_RATE_LIMITED = 429
_READ_CHUNK = 2**16


# -- transport failures, named as httpx names them (a message says ``ConnectError: ...`` whichever transport) --

class TransportError(Exception):
    """The request failed before an answer was read in full."""


class ConnectError(TransportError):
    """No connection: refused, no such host, no route, a TLS handshake refused. Nothing was sent."""


class ConnectTimeout(ConnectError):
    """No connection within the timeout. Nothing was sent."""


class ReadError(TransportError):
    """The connection broke after the request was (perhaps) sent."""


class ReadTimeout(ReadError):
    """No answer, or not all of it, within the timeout."""


class RemoteProtocolError(ReadError):
    """The server answered something that is not HTTP."""


@dataclass(frozen=True)
class PlainRequest:
    method: str
    url: str


@dataclass(frozen=True)
class PlainAnswer:
    """An answer read in full (within the bounds), shaped as ``_errors`` reads httpx's responses."""

    status_code: int
    reason_phrase: str
    headers: Mapping[str, str]
    content: bytes
    request: PlainRequest

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", errors="replace")

    def json(self) -> Any:
        return json.loads(self.content)


def _proxy_named(environ: Mapping[str, str], scheme: str, host: str) -> bool:
    """Whether httpx (``trust_env``) may send a request for ``scheme://host`` through a proxy: the variables as
    ``urllib.request.getproxies`` reads them (a lowercase name wins), ``NO_PROXY`` as httpx reads it (``*``;
    a host; ``name`` for it and its subdomains, ``.name`` for its subdomains). Anything else counts as a proxy,
    so that httpx, not this client, decides."""
    found: dict[str, str] = {}
    for key, value in environ.items():
        name = key.lower()
        if name.endswith("_proxy") and value and (key == name or name not in found):
            found[name] = value
    if not (found.get(f"{scheme}_proxy") or found.get("all_proxy")):
        return False
    host = host.lower()
    for entry in (part.strip().lower() for part in found.get("no_proxy", "").split(",")):
        if entry == "*" or entry == host or (entry.startswith(".") and host.endswith(entry)):
            return False
        if entry and not entry.startswith(".") and "://" not in entry and host.endswith("." + entry):
            return False
    return True


class PlainClient:
    """Bearer-authenticated blocking client for a job's status and its cancel (see the module's docstring)."""

    def __init__(self, base_url: str, api_key: str, *, timeout: float = 30.0,
                 max_attempts: int = RETRY_ATTEMPTS) -> None:
        self.base_url = normalize_backend_url(base_url)
        self._request_base, credentials = split_credentials(self.base_url)
        self._api_key = api_key or ""
        self.timeout = timeout
        self.max_attempts = max_attempts
        self.user_agent = f"synth-nb/{__version__} python/{'.'.join(map(str, sys.version_info[:3]))}"
        self._headers = {"User-Agent": self.user_agent, "Accept": "application/json"}
        if credentials is not None:  # as httpx's basic auth, which replaces the bearer header
            token = base64.b64encode(":".join(credentials).encode()).decode("ascii")
            self._headers["Authorization"] = f"Basic {token}"
        elif self._api_key:
            self._headers["Authorization"] = f"Bearer {self._api_key}"
        #: per-(kind, job) path that answered last time, so fallbacks are probed once
        self._working_paths: dict[tuple[str, str], str] = {}
        #: True once the backend answered anything: from then on a lost connection gets the full retry budget
        self._answered = False

    @staticmethod
    def serves(url: str, environ: Mapping[str, str] | None = None) -> bool:
        """Whether this client can send to ``url`` as httpx would: http or https with no proxy named for it."""
        parts = urlsplit(normalize_backend_url(url))
        if parts.scheme not in ("http", "https") or not parts.hostname:
            return False
        return not _proxy_named(os.environ if environ is None else environ, parts.scheme, parts.hostname)

    def __repr__(self) -> str:
        return f"PlainClient(base_url={self.shown_url!r}, api_key={mask(self._api_key)!r})"

    @property
    def shown_url(self) -> str:
        """``base_url`` as it may be shown or stored: credentials in it masked."""
        return display_url(self.base_url)

    def secret_values(self) -> list[str]:
        return [self._api_key] if self._api_key else []

    def job_path(self, template: str, job_id: str) -> str:
        """``template`` with ``{job_id}`` filled in, percent-encoded as one path segment."""
        return template.replace("{job_id}", path_segment(job_id))

    # -- the contract ----------------------------------------------------------------------------------

    def get_status(self, endpoints: FlowEndpoints, job_id: str) -> dict[str, Any]:
        """The job's status document (primary path, then the flow's fallback status paths)."""
        cache_key = ("status", job_id)
        paths = [endpoints.status, *endpoints.fallback_status]
        remembered = self._working_paths.get(cache_key)
        ordered = [remembered] + [p for p in paths if p != remembered] if remembered else paths
        first_error: NotFoundError | None = None
        for template in ordered:
            try:
                answer = self.request("GET", self.job_path(template, job_id))
            except NotFoundError as exc:
                first_error = first_error or exc
                continue
            self._working_paths[cache_key] = template
            return as_dict(json_body(answer))
        assert first_error is not None
        raise first_error

    def cancel(self, endpoints: FlowEndpoints, job_id: str) -> dict[str, Any]:
        """Ask the backend to cancel (safe to repeat, so retried)."""
        answer = self.request("POST", self.job_path(endpoints.cancel, job_id), json_body={},
                              idempotency_key=f"cancel-{quote(job_id)}")
        return as_dict(json_body(answer))

    # -- one request -----------------------------------------------------------------------------------

    def request(self, method: str, path: str, *, json_body: Any = None,
                idempotency_key: str | None = None) -> PlainAnswer:
        """Send one request with retries; the 2xx answer, else the ``ClientError`` ``AsyncSynthClient`` raises."""
        method = method.upper()
        url = contract_url(self._request_base, path)
        headers = dict(self._headers)
        body = None
        if json_body is not None:
            body = json.dumps(json_body, separators=(",", ":")).encode()
            headers["Content-Type"] = "application/json"
        if idempotency_key:
            headers["Idempotency-Key"] = idempotency_key
        replay_safe = method in ("GET", "HEAD", "OPTIONS", "PUT", "DELETE") or bool(idempotency_key)
        started, first_contact = time.monotonic(), not self._answered
        for attempt in range(1, self.max_attempts + 1):
            try:
                answer = self._send(method, url, headers, body)
            except TransportError as exc:
                # connected once (a reset, a cut answer): the backend is there, as ``RetryPolicy.connected``
                first_contact = first_contact and isinstance(exc, ConnectError)
                wait = _retry_after_failure(exc, attempt, replay_safe=replay_safe, first_contact=first_contact,
                                            started=started)
                if wait is None or attempt == self.max_attempts:
                    unreached = first_contact and isinstance(exc, ConnectError)
                    raise network_error(exc, method, url, secrets=self.secret_values(),
                                        unreached=unreached) from None
            else:
                self._answered = True
                if answer.status_code < 400:
                    return answer
                wait = _retry_after_status(answer, attempt, replay_safe=replay_safe)
                if wait is None or attempt == self.max_attempts:
                    raise error_for_response(answer, secrets=self.secret_values())
            time.sleep(wait)
        raise AssertionError("the retry loop ends by returning or raising")  # pragma: no cover

    def _send(self, method: str, url: str, headers: dict[str, str], body: bytes | None) -> PlainAnswer:
        """One attempt, redirects followed (a 303, or a 301/302 of a POST, becomes a GET; the credentials are
        not sent to another origin)."""
        origin = urlsplit(url)[:2]
        for _ in range(MAX_REDIRECTS + 1):
            answer = self._exchange(method, url, headers, body)
            location = answer.headers.get("location")
            if answer.status_code not in _REDIRECTS or not location:
                return answer
            url = urljoin(url, location)
            if answer.status_code == 303 or (answer.status_code in (301, 302) and method == "POST"):
                method, body = ("GET" if method != "HEAD" else method), None
                headers = {k: v for k, v in headers.items() if k != "Content-Type"}
            if urlsplit(url)[:2] != origin:
                headers = {k: v for k, v in headers.items() if k != "Authorization"}
        raise RemoteProtocolError(f"more than {MAX_REDIRECTS} redirects")

    def _exchange(self, method: str, url: str, headers: dict[str, str], body: bytes | None) -> PlainAnswer:
        """One request and its answer read within the bounds, on a connection of its own."""
        # why here: plain http (the embedded backend) needs no TLS context
        from synth_nb.client._tls import tls_context

        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConnectError(f"cannot send to {mask_userinfo(url)}: not an http(s) URL")
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        connection: http.client.HTTPConnection
        if parts.scheme == "https":
            connection = http.client.HTTPSConnection(parts.hostname, parts.port, timeout=self.timeout,
                                                     context=tls_context())
        else:
            connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=self.timeout)
        request = PlainRequest(method, url)
        try:
            try:
                connection.connect()
            except TimeoutError as exc:
                raise ConnectTimeout(str(exc) or "timed out") from exc
            except OSError as exc:
                raise ConnectError(str(exc) or type(exc).__name__) from exc
            try:
                connection.request(method, target, body=body, headers=headers)
                response = connection.getresponse()
                content = _read_bounded(response, request, answer_seconds(self.timeout))
            except TimeoutError as exc:
                raise ReadTimeout(str(exc) or "timed out") from exc
            except http.client.HTTPException as exc:
                raise RemoteProtocolError(str(exc) or type(exc).__name__) from exc
            except OSError as exc:
                raise ReadError(str(exc) or type(exc).__name__) from exc
        finally:
            connection.close()
        answer = PlainAnswer(response.status, response.reason or "", _headers(response), content, request)
        if content[:64].lstrip()[:1] in (b"{", b"[") and too_deep(content):
            raise BackendAnswerError(f"{method} {mask_userinfo(url)}: the backend answered JSON nested deeper than "
                                     f"{MAX_DEPTH} levels; nothing of it was used")
        return answer


def _retry_after_status(answer: PlainAnswer, attempt: int, *, replay_safe: bool) -> float | None:
    """Seconds to wait before trying again after an error status (``None``: give up), as ``RetryPolicy``
    decides: a 429 (its ``Retry-After`` honoured), a 5xx when the request is safe to send again."""
    if answer.status_code == _RATE_LIMITED:
        after = parse_retry_after(answer.headers.get("retry-after"))
        return after if after is not None else _backoff(attempt)
    return _backoff(attempt) if replay_safe and answer.status_code >= 500 else None


def _retry_after_failure(exc: TransportError, attempt: int, *, replay_safe: bool, first_contact: bool,
                         started: float) -> float | None:
    """Seconds to wait before trying again after ``exc`` (``None``: give up), as ``RetryPolicy`` decides: a
    connection not made is tried again (every half second up to 2 s while the backend never answered), any
    other failure when the request is safe to send again."""
    if isinstance(exc, ConnectError):
        if first_contact:
            left = FIRST_CONTACT_SECONDS - (time.monotonic() - started)
            return None if left <= 0 else min(left, FIRST_CONTACT_RETRY)
        return _backoff(attempt)
    return _backoff(attempt) if replay_safe else None


def _backoff(attempt: int) -> float:
    """stamina's wait after the ``attempt``-th failure: exponential from the initial wait, jittered, capped."""
    return min(RETRY_WAIT_MAX, RETRY_WAIT_INITIAL * 2 ** (attempt - 1) + random.uniform(0, RETRY_WAIT_INITIAL))


def _headers(response: http.client.HTTPResponse) -> dict[str, str]:
    return {name.lower(): value for name, value in response.getheaders()}


def _read_bounded(response: http.client.HTTPResponse, request: PlainRequest, seconds: float) -> bytes:
    """The body, refused beyond ``MAX_ANSWER_BYTES`` and cut once reading it takes longer than ``seconds``
    (as ``_bounds.read_bounded`` reads httpx's)."""
    where = f"{request.method} {mask_userinfo(request.url)}"
    declared = response.getheader("content-length") or ""
    if declared.isdigit() and int(declared) > MAX_ANSWER_BYTES:
        raise BackendAnswerError(f"{where}: the backend answered {int(declared):,} bytes, more than "
                                 f"the {MAX_ANSWER_BYTES // 2**20} MiB an answer may have; nothing of it was used")
    started, chunks, size = time.monotonic(), [], 0
    while chunk := response.read1(_READ_CHUNK):
        size += len(chunk)
        if size > MAX_ANSWER_BYTES:
            raise BackendAnswerError(f"{where}: the backend's answer is larger than the "
                                     f"{MAX_ANSWER_BYTES // 2**20} MiB an answer may have; nothing of it was used")
        chunks.append(chunk)
        if time.monotonic() - started > seconds:
            raise TimeoutError(f"the answer was still arriving after {seconds:.0f} s ({size:,} bytes so far)")
    return b"".join(chunks)
