"""Retry policy (stamina): exponential backoff with jitter on connect errors, 5xx and 429.

A POST is only retried when it cannot create a duplicate: either the request never reached the server
(connect errors, 429) or it carries an ``Idempotency-Key`` the backend deduplicates on.
"""

from __future__ import annotations

import email.utils
import logging
import time
from dataclasses import dataclass

import httpx
import stamina

__all__ = ["RetryableStatus", "RetryPolicy", "parse_retry_after"]

# stamina logs every scheduled retry at WARNING; without this, Python's last-resort handler would print
# them into terminals and notebook cells. Applications that configure logging still receive them.
logging.getLogger("stamina").addHandler(logging.NullHandler())

#: never sleep longer than this for one Retry-After, whatever the server says
MAX_RETRY_AFTER = 60.0


class RetryableStatus(Exception):
    """Raised inside a retry block for a 429/5xx response so stamina can retry it."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        super().__init__(f"HTTP {response.status_code}")


def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or HTTP date)."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - time.time()
    return max(0.0, min(seconds, MAX_RETRY_AFTER))


_NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)


@dataclass(frozen=True)
class RetryPolicy:
    """Which failures to retry for one request, and how often."""

    attempts: int = 6
    wait_initial: float = 0.25
    wait_max: float = 10.0
    #: True for GETs and for POSTs that carry an Idempotency-Key
    replay_safe: bool = True

    def should_retry(self, exc: Exception) -> bool | float:
        """stamina backoff hook: False = give up, True = default backoff, float = wait that long."""
        if isinstance(exc, RetryableStatus):
            status = exc.response.status_code
            if status == 429:
                after = parse_retry_after(exc.response.headers.get("retry-after"))
                return after if after is not None else True
            return self.replay_safe and status >= 500
        if isinstance(exc, _NOT_SENT):
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
