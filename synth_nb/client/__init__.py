"""HTTP client for the Synth backend contract: async (``AsyncSynthClient``) and blocking (``SynthClient``).

The client knows no flow and no job: callers hand in a flow's ``FlowEndpoints`` (``synth_nb.contract``).
Base URLs go through ``synth_nb.backend.normalize_backend_url`` (the one ``/api`` suffix rule).
"""

from __future__ import annotations

from synth_nb.client._client import AsyncSynthClient
from synth_nb.client._parse import EventRecord, MetricPage, MetricRecord, parse_metric_records, parse_metrics
from synth_nb.client._stream import TRANSIENT_ERRORS, EventStream, StreamClient
from synth_nb.client._sync import SynthClient

__all__ = ["TRANSIENT_ERRORS", "AsyncSynthClient", "EventRecord", "EventStream", "MetricPage", "MetricRecord",
           "StreamClient", "SynthClient", "parse_metric_records", "parse_metrics"]
