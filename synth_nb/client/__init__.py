"""HTTP client for the Synth backend contract: async (``AsyncSynthClient``) and blocking (``SynthClient``)."""

from __future__ import annotations

from synth_nb.client._client import AsyncSynthClient, normalize_backend_url
from synth_nb.client._stream import EventStream
from synth_nb.client._sync import SynthClient

__all__ = ["AsyncSynthClient", "EventStream", "SynthClient", "normalize_backend_url"]
