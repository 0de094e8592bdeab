"""One GET of the embedded backend's own URL, for its probes (``synth_nb.local.backend_proof.describe_backend``):
the standard library's HTTP client where it asks exactly what httpx would, httpx for any other URL."""

from __future__ import annotations

import http.client
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlencode

__all__ = ["PROBE_BYTES", "ProbeAnswer", "probe_get", "probe_netloc"]

#: a URL the standard library's HTTP client asks exactly as httpx would (plain http, a lowercase host, an explicit
#: port that is not the default, a path of plain characters): what ``start_backend`` writes
_PLAIN_URL = re.compile(r"http://([a-z0-9.-]+):([1-9][0-9]{0,4})(/[A-Za-z0-9._~/-]*)?")
#: the most a probe reads of an answer (a description with its job counts is a few hundred bytes)
PROBE_BYTES = 2**20


@dataclass(frozen=True)
class ProbeAnswer:
    """An answer's status and its body as read (at most ``PROBE_BYTES`` and one more)."""

    status_code: int
    body: bytes

    def json(self) -> object:
        if len(self.body) > PROBE_BYTES:
            raise ValueError(f"an answer of more than {PROBE_BYTES:,} bytes")
        return json.loads(self.body)


def probe_get(url: str, *, timeout: float, params: Mapping[str, str] | None = None,
              headers: Mapping[str, str] | None = None) -> ProbeAnswer:
    """One GET to a backend's own URL, no redirect followed and no proxy from the environment; ``TimeoutError``
    when it does not answer in time, ``OSError`` or ``http.client.HTTPException`` when it cannot be asked.

    The embedded backend's URL (``_PLAIN_URL``) is asked with the standard library's client: importing httpx
    and building its TLS context cost most of ``synth-nb backend --status`` (``benchmarks/cli_start.py``).
    Any other URL goes through httpx."""
    plain = _PLAIN_URL.fullmatch(url)
    if plain is None or int(plain[2]) == 80 or int(plain[2]) > 65535:
        return _httpx_get(url, timeout=timeout, params=params, headers=headers)
    connection = http.client.HTTPConnection(plain[1], int(plain[2]), timeout=timeout)
    try:
        connection.request("GET", (plain[3] or "/") + (f"?{urlencode(params)}" if params else ""),
                           headers=dict(headers or {}))
        response = connection.getresponse()
        return ProbeAnswer(response.status, response.read(PROBE_BYTES + 1))
    finally:
        connection.close()


def _httpx_get(url: str, *, timeout: float, params: Mapping[str, str] | None,
               headers: Mapping[str, str] | None) -> ProbeAnswer:
    import httpx  # why here: the embedded backend's own URL needs no httpx (``probe_get``)

    try:
        with httpx.Client(trust_env=False, follow_redirects=False, timeout=timeout) as http:
            answer = http.get(url, params=params, headers=headers)
    except httpx.TimeoutException as exc:
        raise TimeoutError(str(exc)) from exc
    except httpx.HTTPError as exc:
        raise OSError(str(exc)) from exc
    return ProbeAnswer(answer.status_code, answer.content)


def probe_netloc(url: str) -> str:
    """``host:port`` of ``url`` as httpx writes it (the key proof is bound to it)."""
    plain = _PLAIN_URL.fullmatch(url)
    if plain is not None and int(plain[2]) != 80 and int(plain[2]) <= 65535:
        return f"{plain[1]}:{int(plain[2])}"
    import httpx

    return httpx.URL(url).netloc.decode("ascii")
