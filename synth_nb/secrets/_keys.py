"""Which environment variables synth-nb reads, and which of them are secrets.

Which keys a job *requires* depends on its flow and is the flow's to say (``Flow.required_secrets``);
resolution always collects every key below.
"""

from __future__ import annotations

__all__ = ["ENVIRONMENT_API_KEY", "OPTIONAL_SECRETS", "SECRET_KEYS", "SETTING_KEYS", "SYNTH_API_KEY"]

#: the backend's bearer key (the embedded local backend brings its own)
SYNTH_API_KEY = "SYNTH_API_KEY"
#: the key a task app checks (RL and prompt learning)
ENVIRONMENT_API_KEY = "ENVIRONMENT_API_KEY"

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
