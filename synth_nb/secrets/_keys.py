"""Which environment variables synth-nb reads, and which of them are secrets (spec §4.1)."""

from __future__ import annotations

__all__ = ["OPTIONAL_SECRETS", "REQUIRED_BY_FLOW", "SECRET_KEYS", "SETTING_KEYS", "required_keys"]

SYNTH_API_KEY = "SYNTH_API_KEY"
ENVIRONMENT_API_KEY = "ENVIRONMENT_API_KEY"

#: required keys per flow. SFT never talks to a task app, so unlike synth-ai 0.2.24 it does not need
#: ENVIRONMENT_API_KEY (a deliberate fix).
REQUIRED_BY_FLOW: dict[str, tuple[str, ...]] = {
    "rl": (SYNTH_API_KEY, ENVIRONMENT_API_KEY),
    "prompt_learning": (SYNTH_API_KEY, ENVIRONMENT_API_KEY),
    "sft": (SYNTH_API_KEY,),
}

#: secret values that are honoured when present (comma list of extra task-app keys)
OPTIONAL_SECRETS: tuple[str, ...] = ("ENVIRONMENT_API_KEY_ALIASES",)

SECRET_KEYS: tuple[str, ...] = (SYNTH_API_KEY, ENVIRONMENT_API_KEY, *OPTIONAL_SECRETS)

#: non-secret settings resolved with the same precedence (shown in clear)
SETTING_KEYS: tuple[str, ...] = (
    "TASK_APP_URL",
    "SDK_EXPERIMENTAL",
    "SDK_EXPERIMENTAL_MODELS",
    "SYNTH_SKIP_TASK_APP_HEALTH_CHECK",
    "SYNTH_USER_ID",
    "X_USER_ID",
    "USER_ID",
    "SYNTH_ORG_ID",
    "X_ORG_ID",
    "ORG_ID",
)


def required_keys(flow: str, *, local_backend: bool = False) -> tuple[str, ...]:
    """Keys a flow cannot run without; the embedded local backend supplies its own SYNTH_API_KEY."""
    try:
        keys = REQUIRED_BY_FLOW[flow]
    except KeyError:
        raise ValueError(f"unknown flow {flow!r}; expected one of {', '.join(REQUIRED_BY_FLOW)}") from None
    if local_backend:
        keys = tuple(k for k in keys if k != SYNTH_API_KEY)
    return keys
