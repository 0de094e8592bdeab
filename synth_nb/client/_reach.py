"""Whether the backend answers: the "unreachable since" that the CLI and the notebook panel both show.

A request counts as unanswered when no HTTP answer came back from the backend: the connection was refused
or timed out, or a gateway in front of it said it is down (502, 503, 504). Any other answer, even an error,
means the backend is reachable again. Read timeouts do not count: an event stream may be quiet for long.
"""

from __future__ import annotations

from datetime import datetime

import httpx

__all__ = ["GATEWAY_DOWN", "NOT_ANSWERED", "Reachability"]

#: transport failures that mean the backend did not answer at all
NOT_ANSWERED = (httpx.ConnectError, httpx.ConnectTimeout)
#: statuses a proxy or load balancer answers with when the backend behind it is down
GATEWAY_DOWN = frozenset({502, 503, 504})


class Reachability:
    """When requests stopped getting answers (``None`` while they get them)."""

    def __init__(self, *, answered_before: bool = False) -> None:
        self.since: datetime | None = None
        #: True once any answer came: from then on an outage is ridden out with the full retry budget
        self.ever_answered = answered_before

    def failed(self) -> None:
        if self.since is None:
            self.since = datetime.now().astimezone()

    def answered(self, status: int = 200) -> None:
        if status in GATEWAY_DOWN:
            self.failed()
        else:
            self.since = None
            self.ever_answered = True
