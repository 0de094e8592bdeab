"""Retry policy (stamina): exponential backoff with jitter on connect errors, 5xx and 429.

A POST is only retried when it cannot create a duplicate: either the request never reached the server
(connect errors, 429) or it carries an ``Idempotency-Key`` the backend deduplicates on. ``with_retries``
is the one place that runs an attempt under the policy and turns what is left into our errors.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import httpx
import stamina

from synth_nb.client._errors import error_for_response, network_error
from synth_nb.client._shared import (
    FIRST_CONTACT_RETRY,
    FIRST_CONTACT_SECONDS,
    RETRY_ATTEMPTS,
    RETRY_WAIT_INITIAL,
    RETRY_WAIT_MAX,
    parse_retry_after,
)

__all__ = ["ErrorStatus", "RetryPolicy", "parse_retry_after", "with_retries"]

T = TypeVar("T")

# stamina logs every scheduled retry at WARNING; without this, Python's last-resort handler would print
# them into terminals and notebook cells. Applications that configure logging still receive them.
logging.getLogger("stamina").addHandler(logging.NullHandler())

class ErrorStatus(Exception):
    """Raised inside a retry block for an error response: retried when the policy says so (429, 5xx)."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        super().__init__(f"HTTP {response.status_code}")


_NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
#: what a backend that never answers gives: refused, no such host, no route, or no answer to the connect
_NOT_CONNECTED = (httpx.ConnectError, httpx.ConnectTimeout)


@dataclass
class RetryPolicy:
    """Which failures to retry for one request, and how often (one policy per request: it remembers whether
    an attempt got as far as a connection)."""

    attempts: int = RETRY_ATTEMPTS
    wait_initial: float = RETRY_WAIT_INITIAL
    wait_max: float = RETRY_WAIT_MAX
    #: True for GETs and for POSTs that carry an Idempotency-Key
    replay_safe: bool = True
    #: the backend never answered this client: connecting is given up after ``FIRST_CONTACT_SECONDS``
    first_contact: bool = False
    started: float = field(default_factory=time.monotonic)
    #: an attempt failed after its connection was made (a reset, a cut answer): the backend is there and the
    #: request may have reached it, so a refused connection after that is an outage, ridden out in full (a
    #: create whose answer was lost, then refused for 3 s, was given up as "nothing was sent")
    connected: bool = False

    @property
    def unreached(self) -> bool:
        """No answer and no connection yet: the backend may not be there at all."""
        return self.first_contact and not self.connected

    def should_retry(self, exc: Exception) -> bool | float:
        """stamina backoff hook: False = give up, True = default backoff, float = wait that long."""
        if isinstance(exc, ErrorStatus):
            status = exc.response.status_code
            if status == 429:
                after = parse_retry_after(exc.response.headers.get("retry-after"))
                return after if after is not None else True
            return self.replay_safe and status >= 500
        if isinstance(exc, httpx.TransportError) and not isinstance(exc, _NOT_SENT):
            self.connected = True
        if isinstance(exc, _NOT_SENT):
            if self.unreached and isinstance(exc, _NOT_CONNECTED):  # tried again every half second, up to 2 s
                left = FIRST_CONTACT_SECONDS - (time.monotonic() - self.started)
                return False if left <= 0 else min(left, FIRST_CONTACT_RETRY)
            return True
        if isinstance(exc, httpx.TransportError):
            return self.replay_safe
        return False

    def context(self) -> stamina._core._RetryContextIterator:
        return stamina.retry_context(
            on=self.should_retry,
            attempts=self.attempts,
            timeout=None,
            wait_initial=self.wait_initial,
            wait_max=self.wait_max,
            wait_jitter=self.wait_initial,
        )


async def with_retries(send: Callable[[], Awaitable[T]], policy: RetryPolicy, *, method: str, url: str,
                       secrets: Sequence[str] = ()) -> T:
    """Run ``send`` under ``policy``; an ``ErrorStatus`` or transport failure that is left becomes our error."""
    try:
        async for attempt in policy.context():
            with attempt:
                return await send()
    except ErrorStatus as exc:
        raise error_for_response(exc.response, secrets=list(secrets)) from None
    except httpx.TransportError as exc:
        unreached = policy.unreached and isinstance(exc, _NOT_CONNECTED)
        raise network_error(exc, method, url, secrets=list(secrets), unreached=unreached) from None
    raise AssertionError("stamina ended without an outcome")  # pragma: no cover - it returns or raises
