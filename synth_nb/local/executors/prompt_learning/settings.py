"""Reading a prompt-learning create-request body into typed settings, with create-time validation.

The body is what ``synth-ai train`` / synth-nb send: the ``[prompt_learning]``
table under ``config_body``. Nested keys win over the deprecated flat aliases. Every problem is reported
as an ``ExecutorInputError`` naming the dotted key, so the server answers 4xx before the job starts.

Local additions (ignored by the hosted backend): ``policy.local_policy`` (``offline``/``upstream``/
``keyword``), ``policy.inference_url``/``api_base``/``base_url`` + ``policy.api_key_env`` for an upstream
policy, ``mutation.api_key_env`` / ``mipro.meta.api_key_env`` for the proposer model, and
``policy.local_model`` / ``mutation.local_model`` / ``mipro.meta.local_model``: a model the backend serves
itself on 127.0.0.1 with ``transformers serve`` (``smollm2``, a ``.gguf`` file, a model folder or a cached hub
id; see ``model_server``), in place of an upstream URL. ``local_model`` may also be the http(s) URL of an
OpenAI-compatible server the user runs (Ollama, vLLM, llama.cpp, ``synth-nb model-server``, a provider), with
``local_model_name`` (default: the one model the server lists) and ``api_key_env``: that form passes the
client's checks, which refuse ``policy.inference_url`` and model names outside the hosted catalogue.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from synth_nb.local.errors import ExecutorInputError
from synth_nb.local.policies import OFFLINE_ENVS, POLICY_KINDS, PolicySpec

__all__ = ["Message", "ProposerSpec", "PromptSettings", "as_table", "get_path", "parse_prompt_settings", "section"]

_WILDCARD = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def as_table(value: Any) -> dict[str, Any]:
    """``value`` when it is a TOML table, else an empty one (absent optional sections)."""
    return value if isinstance(value, dict) else {}


def section(body: dict[str, Any]) -> dict[str, Any]:
    """The ``[prompt_learning]`` table of a create body (``config_body.prompt_learning``, or the body itself)."""
    config = body.get("config_body")
    if isinstance(config, dict) and isinstance(config.get("prompt_learning"), dict):
        return config["prompt_learning"]
    if isinstance(body.get("prompt_learning"), dict):
        return body["prompt_learning"]
    raise ExecutorInputError("config_body.prompt_learning is missing: send the [prompt_learning] table as "
                             "config_body = {\"prompt_learning\": {...}}")


def get_path(table: dict[str, Any], *paths: str, default: Any = None) -> Any:
    """First present value among dotted ``paths`` (``"rollout.budget"``, ``"rollout_budget"``)."""
    for path in paths:
        node: Any = table
        for part in path.split("."):
            node = node.get(part) if isinstance(node, dict) else None
            if node is None:
                break
        if node is not None:
            return node
    return default


def positive_int(value: Any, key: str, *, allow_none: bool = True) -> int | None:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ExecutorInputError(f"{key} must be an integer, got {value!r}")
    if value <= 0:
        raise ExecutorInputError(f"{key} must be > 0, got {value}")
    return value


def rollout_cap(caps: dict[str, Any]) -> tuple[int | None, str | None]:
    """The smallest of the rollout caps given (config key -> value; None: not given) and the key that set it:
    a search stops at whichever cap it reaches first (its own budget or ``termination_config.max_rollouts``)."""
    given = [(n, key) for key, value in caps.items() if (n := positive_int(value, key)) is not None]
    if not given:
        return None, None
    return min(given, key=lambda found: found[0])


def seed_list(value: Any, key: str, *, required: bool) -> list[int]:
    if value is None:
        if required:
            raise ExecutorInputError(f"{key} is required: list the task-app seeds to use, e.g. [0, 1, 2]")
        return []
    if not isinstance(value, list) or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0
                                              for s in value):
        raise ExecutorInputError(f"{key} must be a list of non-negative integer seeds, got {value!r}")
    if required and not value:
        raise ExecutorInputError(f"{key} is empty: list at least one task-app seed")
    return list(dict.fromkeys(value))


@dataclass(frozen=True)
class Message:
    """One message pattern of the initial prompt; ``component`` is set when the search may rewrite it."""

    role: str
    pattern: str
    order: int
    component: str | None = None

    @property
    def wildcards(self) -> list[str]:
        return _WILDCARD.findall(self.pattern)


@dataclass(frozen=True)
class ProposerSpec:
    """The proposer/reflection model; no ``url`` and no ``local_model`` means the offline deterministic proposer."""

    model: str | None = None
    provider: str | None = None
    url: str | None = None
    api_key_env: str | None = None
    temperature: float = 0.7
    max_tokens: int = 1024
    metaprompt: str | None = None
    #: a model the backend serves itself (``model_server``); ``url``/``model`` are set once it runs
    local_model: str | None = None

    @property
    def offline(self) -> bool:
        return not self.url and not self.local_model


@dataclass
class PromptSettings:
    algorithm: str
    task_app_url: str
    task_app_api_key: str | None
    env_name: str
    env_config: dict[str, Any]
    messages: list[Message]
    policy_config: dict[str, Any]
    policy: PolicySpec
    proposer: ProposerSpec
    termination: dict[str, Any] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def components(self) -> dict[str, str]:
        """The seed candidate: component id -> text of each rewritable message."""
        return {m.component: m.pattern for m in self.messages if m.component}

    @property
    def train_split(self) -> str:
        return str(self.env_config.get("split") or self.env_config.get("pool") or "train")


def _messages(pl: dict[str, Any]) -> list[Message]:
    prompt = pl.get("initial_prompt")
    raw = prompt.get("messages") if isinstance(prompt, dict) else None
    if not isinstance(raw, list) or not raw:
        raise ExecutorInputError("prompt_learning.initial_prompt.messages is required and must be a non-empty "
                                 "array of {role, pattern, order} tables (the prompt to optimise)")
    parsed: list[tuple[int, int, dict[str, Any]]] = []
    for i, item in enumerate(raw):
        key = f"prompt_learning.initial_prompt.messages[{i}]"
        if not isinstance(item, dict):
            raise ExecutorInputError(f"{key} must be a table with role and pattern")
        text = item.get("pattern", item.get("content"))
        if not isinstance(item.get("role"), str) or not isinstance(text, str) or not text.strip():
            raise ExecutorInputError(f"{key} needs a string role and a non-empty pattern")
        order = item.get("order", i)
        parsed.append((order if isinstance(order, int) else i, i, item))
    parsed.sort(key=lambda t: (t[0], t[1]))
    rewritable = [idx for idx, (_, _, m) in enumerate(parsed) if m["role"] in ("system", "developer")] or [0]
    names: dict[int, str] = {}
    for idx in rewritable:
        item = parsed[idx][2]
        base = str(item.get("name") or item.get("id") or item["role"])
        names[idx] = base if base not in names.values() else f"{base}_{idx}"
    return [Message(role=m["role"], pattern=str(m.get("pattern", m.get("content"))), order=o,
                    component=names.get(idx)) for idx, (o, _, m) in enumerate(parsed)]


def is_server_url(name: Any) -> bool:
    return isinstance(name, str) and name.strip().startswith(("http://", "https://"))


def check_local_model(name: Any, key: str) -> str:
    """``name`` when the backend can serve it (the model is on disk, transformers serve is installed) or it is a
    server's URL, else an ``ExecutorInputError`` naming ``key`` and what to install or name."""
    if not isinstance(name, str) or not name.strip():
        raise ExecutorInputError(f"{key} must name a model: smollm2, a .gguf file, a model folder, a cached hub id "
                                 "or the http(s) URL of a running OpenAI-compatible server")
    if is_server_url(name):
        return name.strip()
    from synth_nb.local.errors import ModelServerError
    from synth_nb.local.model_server import resolve_served_model, serving_missing

    try:
        served = resolve_served_model(name)
    except ModelServerError as exc:
        raise ExecutorInputError(f"{key}: {exc}") from None
    missing = serving_missing(served.gguf)
    if missing:
        raise ExecutorInputError(f"{key}: {missing}")
    return name.strip()


def _policy_spec(body: dict[str, Any], pl: dict[str, Any], env_name: str) -> PolicySpec:
    policy = as_table(pl.get("policy"))
    meta = as_table(body.get("metadata"))
    url = policy.get("inference_url") or policy.get("api_base") or policy.get("base_url")
    if policy.get("local_model") is not None:
        if url:
            raise ExecutorInputError("prompt_learning.policy: give local_model (a model the backend serves) or "
                                     "inference_url (a server of yours), not both")
        name = check_local_model(policy.get("local_model"), "prompt_learning.policy.local_model")
        if is_server_url(name):  # the model name is the server's (asked for at run time when not given)
            return PolicySpec("upstream", url=name, model=policy.get("local_model_name"), provider=policy.get("provider"),
                              api_key=policy.get("api_key"), api_key_env=policy.get("api_key_env"))
        return PolicySpec("upstream", provider=policy.get("provider"), local_model=name)
    kind = meta.get("local_policy") or policy.get("local_policy") or ("upstream" if url else "offline")
    if kind not in POLICY_KINDS:
        raise ExecutorInputError(f"prompt_learning.policy.local_policy must be one of {list(POLICY_KINDS)}, "
                                 f"got {kind!r}")
    model, provider = policy.get("model"), policy.get("provider")
    if kind == "upstream":
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ExecutorInputError("prompt_learning.policy.inference_url must be the http(s) base URL of an "
                                     "OpenAI-compatible server when local_policy = \"upstream\"")
        return PolicySpec("upstream", url=url, model=model, provider=provider,
                          api_key=policy.get("api_key"), api_key_env=policy.get("api_key_env"))
    if kind == "offline":
        if env_name.lower() not in OFFLINE_ENVS:
            raise ExecutorInputError(
                f"the offline policy only serves intent-classification task apps ({', '.join(sorted(OFFLINE_ENVS))}), "
                f"not env_name {env_name!r}: set prompt_learning.policy.inference_url (an OpenAI-compatible "
                "server) and policy.api_key_env to run this task with a real model")
        from synth_nb.local.policies.embedding import embedding_policy_missing

        missing = embedding_policy_missing()
        if missing:
            raise ExecutorInputError(f"{missing}; or set prompt_learning.policy.inference_url")
    return PolicySpec(kind, model=model, provider=provider)


def proposer_spec(table: dict[str, Any], *, model_keys: tuple[str, ...], provider_keys: tuple[str, ...],
                  url_keys: tuple[str, ...], key_env_keys: tuple[str, ...], temperature_keys: tuple[str, ...],
                  max_tokens_keys: tuple[str, ...], prompt_keys: tuple[str, ...], local_model_key: str,
                  section_key: str) -> ProposerSpec:
    url = get_path(table, *url_keys)
    if url is not None and (not isinstance(url, str) or not url.startswith(("http://", "https://"))):
        raise ExecutorInputError(f"prompt_learning.{section_key}.{url_keys[0]} must be an http(s) URL, got {url!r}")
    local = get_path(table, local_model_key)
    if local is not None:
        if url is not None:
            raise ExecutorInputError(f"prompt_learning.{section_key}: give {local_model_key} (a model the backend "
                                     f"serves) or {url_keys[0]} (a server of yours), not both")
        local = check_local_model(local, f"prompt_learning.{section_key}.{local_model_key}")
        if is_server_url(local):  # a server of the user's: its URL, and its model name (asked for when not given)
            url, local = local, None
            model_keys = (f"{local_model_key}_name",)
    return ProposerSpec(model=get_path(table, *model_keys), provider=get_path(table, *provider_keys), url=url,
                        api_key_env=get_path(table, *key_env_keys),
                        temperature=float(get_path(table, *temperature_keys, default=0.7)),
                        max_tokens=int(get_path(table, *max_tokens_keys, default=1024)),
                        metaprompt=get_path(table, *prompt_keys), local_model=local)


def parse_prompt_settings(body: dict[str, Any], algorithm: str, proposer: ProposerSpec | None = None
                          ) -> PromptSettings:
    pl = section(body)
    declared = (body.get("algorithm") or pl.get("algorithm") or algorithm)
    if str(declared).lower() != algorithm:
        raise ExecutorInputError(f"prompt_learning.algorithm is {declared!r}, but this is the {algorithm} executor")
    url = pl.get("task_app_url")
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise ExecutorInputError("prompt_learning.task_app_url must be the http(s) URL of a running task app "
                                 f"(got {url!r}); start one with `synth-nb task-app banking`")
    algo_table = as_table(pl.get(algorithm))
    env_name = str(pl.get("env_name") or algo_table.get("env_name") or pl.get("task_app_id") or "banking77")
    env_config = algo_table.get("env_config") or pl.get("env_config") or {}
    if not isinstance(env_config, dict):
        raise ExecutorInputError("prompt_learning.env_config must be a table")
    termination = as_table(pl.get("termination_config"))
    policy = as_table(pl.get("policy"))
    return PromptSettings(
        algorithm=algorithm, task_app_url=url.rstrip("/"),
        task_app_api_key=pl.get("task_app_api_key") if isinstance(pl.get("task_app_api_key"), str) else None,
        env_name=env_name, env_config=dict(env_config), messages=_messages(pl),
        policy_config={k: policy[k] for k in ("model", "provider", "temperature", "max_completion_tokens",
                                              "policy_name") if k in policy},
        policy=_policy_spec(body, pl, env_name), proposer=proposer or ProposerSpec(),
        termination=dict(termination), raw=pl)


def check_modules(module_ids: list[Any], settings: PromptSettings, key: str) -> None:
    """Module ids in the config must name a rewritable message (``default``/``main`` = the only one)."""
    known = list(settings.components)
    for i, module_id in enumerate(module_ids):
        if module_id in known or (module_id in ("default", "main") and len(known) == 1):
            continue
        raise ExecutorInputError(f"{key}[{i}] names unknown module {module_id!r}; the initial prompt's "
                                 f"rewritable modules are {known} (system messages, by name or role)")
