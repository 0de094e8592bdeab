"""HTTP client for the Synth backend contract: async (``AsyncSynthClient``) and blocking (``SynthClient``) on
httpx, and ``PlainClient`` on the standard library's HTTP client for a command that sends a request or two.

The client knows no flow and no job: callers hand in a flow's ``FlowEndpoints`` (``synth_nb.contract``).
Base URLs go through ``synth_nb.backend.normalize_backend_url`` (the one ``/api`` suffix rule). Names are
imported on first use (``synth_nb._lazy``): ``PlainClient`` imports no httpx (``synth-nb cancel``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from synth_nb._lazy import exports
from synth_nb.errors import TRANSIENT_ERRORS

if TYPE_CHECKING:
    from synth_nb.client._client import AsyncSynthClient
    from synth_nb.client._lenient import parse_metrics
    from synth_nb.client._parse import EventRecord, MetricPage, MetricRecord, parse_metric_records
    from synth_nb.client._stream import EventStream, StreamClient
    from synth_nb.client._sync import SynthClient
    from synth_nb.client.plain import PlainClient

__getattr__ = exports(__name__, {
    "AsyncSynthClient": "synth_nb.client._client",
    "EventRecord": "synth_nb.client._parse",
    "MetricPage": "synth_nb.client._parse",
    "MetricRecord": "synth_nb.client._parse",
    "parse_metric_records": "synth_nb.client._parse",
    "parse_metrics": "synth_nb.client._lenient",
    "EventStream": "synth_nb.client._stream",
    "StreamClient": "synth_nb.client._stream",
    "SynthClient": "synth_nb.client._sync",
    "PlainClient": "synth_nb.client.plain",
})

__all__ = ["TRANSIENT_ERRORS", "AsyncSynthClient", "EventRecord", "EventStream", "MetricPage", "MetricRecord",
           "PlainClient", "StreamClient", "SynthClient", "parse_metric_records", "parse_metrics"]
