"""Forward chat completions to any OpenAI-compatible server (a provider, vLLM, llama.cpp, Ollama …).

Used both as the task policy (the candidate prompt has already been substituted by the caller) and as
the proposer model. The API key only ever travels in the Authorization header; errors never contain it.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from synth_nb.local.errors import PolicyCallError, json_answer

__all__ = ["UpstreamPolicy", "chat_completions_url", "served_model"]


def chat_completions_url(base_url: str) -> str:
    """``…/chat/completions`` as given; ``…/v1`` (or ``/openai/v1``) gains ``/chat/completions``; else ``/v1/…``."""
    parts = urlsplit(base_url.strip())
    path = parts.path.rstrip("/")
    if not path.endswith("/chat/completions"):
        path += "/chat/completions" if path.endswith("/v1") or "/v1/" in path else "/v1/chat/completions"
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def served_model(base_url: str, api_key: str | None, *, timeout: float = 30.0) -> str:
    """The one model an OpenAI-compatible server lists at ``/models`` (next to ``/chat/completions``), for a
    config that names the server but not its model; ``PolicyCallError`` when it lists none or several."""
    url = chat_completions_url(base_url).removesuffix("/chat/completions") + "/models"
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        response = httpx.get(url, headers=headers, timeout=httpx.Timeout(timeout, connect=10.0))
    except httpx.HTTPError as exc:
        raise PolicyCallError(f"{url} unreachable: {type(exc).__name__}") from None
    payload = json_answer(response, url, PolicyCallError)
    listed = payload.get("data") if isinstance(payload, dict) else None
    ids = [m["id"] for m in listed or [] if isinstance(m, dict) and isinstance(m.get("id"), str)]
    if len(ids) != 1:
        shown = ", ".join(ids[:5]) + (", …" if len(ids) > 5 else "")
        raise PolicyCallError(f"{url} lists {len(ids)} models{f' ({shown})' if ids else ''}: name the one to use "
                              "with local_model_name")
    return ids[0]


class UpstreamPolicy:
    name = "upstream"

    def __init__(self, base_url: str, api_key: str | None, model: str | None = None, *,
                 timeout: float = 120.0, extra_body: dict[str, Any] | None = None) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"upstream URL must start with http:// or https://, got {base_url!r}")
        self.url = chat_completions_url(base_url)
        # parsed once: httpx re-parses and re-quotes a str URL on every request (half its per-call CPU)
        self._parsed_url = httpx.URL(self.url)
        self.model = model or "upstream"
        self._override_model = model
        self._extra = dict(extra_body or {})
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(headers=headers, timeout=httpx.Timeout(timeout, connect=10.0),
                                    limits=httpx.Limits(max_connections=64))

    def complete(self, request: dict[str, Any]) -> dict[str, Any]:
        body = {**request, **self._extra}
        if self._override_model:
            body["model"] = self._override_model
        try:
            response = self._client.post(self._parsed_url, json=body)
        except httpx.HTTPError as exc:
            raise PolicyCallError(f"upstream {self.url} unreachable: {type(exc).__name__}") from None
        payload = json_answer(response, f"upstream {self.url}", PolicyCallError)
        if not isinstance(payload, dict) or not payload.get("choices"):
            raise PolicyCallError(f"upstream {self.url} answered without choices")
        return payload

    def close(self) -> None:
        self._client.close()
