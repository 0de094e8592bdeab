"""Which environment variables synth-nb reads, and which of them are secrets.

Which keys a job *requires* depends on its flow and is the flow's to say (``Flow.required_secrets``);
resolution always collects every key below.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from synth_nb.errors import SecretsError

__all__ = ["ENVIRONMENT_API_KEY", "OPTIONAL_SECRETS", "SECRET_KEYS", "SETTING_KEYS", "SYNTH_API_KEY",
           "missing_keys_error"]

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

_HOW_TO_SET = (
    "export it, put it in a .env file next to the config (or any parent folder), "
    "pass --env-file PATH, or --modal-secret NAME"
)


def missing_keys_error(names: Iterable[str], *, looked_in: Iterable[str] = (),
                       blank: Mapping[str, str] | None = None, near: Mapping[str, str] | None = None
                       ) -> SecretsError:
    """``missing required key(s) A, B (looked in: ...; A is empty at FILE:LINE; found A_: did you mean A (in
    FILE line N)?): <how to set them>``.

    Names the sources that were read, any ``.env`` line that sets a key to nothing and any that sets a
    misspelt name; never a value.
    """
    names = list(names)
    noun = "key" if len(names) == 1 else "keys"
    where = [f"looked in: {', '.join(looked_in)}"] if looked_in else []
    where += [f"{name} is empty at {(blank or {})[name]}" for name in names if name in (blank or {})]
    where += [(near or {})[name] for name in names if name in (near or {}) and name not in (blank or {})]
    detail = f" ({'; '.join(where)})" if where else ""
    return SecretsError(f"missing required {noun} {', '.join(names)}{detail}: {_HOW_TO_SET}")
