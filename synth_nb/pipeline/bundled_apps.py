"""The embedded backend's bundled example task apps as the client sees them, in one place.

The embedded backend serves each bundled task app (``banking``, ``charclass``: ``synth_nb.local.examples``, a
light module of names and paths) at ``/task-apps/<name>`` on whatever port it listens now. Here: the names,
where one is served (``served_at``, ``example_task_app_url``), which one a URL is (``name_at``), where one a
job used has moved since (``moved``, for re-runs and forks), which one a config is written for (``named_by``,
through ``Flow.task_app_ref``), what a failed task-app check adds (``hint``) and how to point a config at one
(``usage``). ``synth_nb.pipeline.prepare`` stands one in for a config's own task app that does not answer.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from synth_nb.config import load_config
from synth_nb.errors import SynthNbError
from synth_nb.flows import all_flows, get_flow
from synth_nb.local.examples import TASK_APP_PREFIX, TASK_APPS, task_app_path
from synth_nb.pipeline.target import Target, local_backend

if TYPE_CHECKING:
    from synth_nb.flows.base import ConfigLike

__all__ = ["NAMES", "example_task_app_url", "hint", "moved", "name_at", "named_by", "named_in", "served_at", "usage"]

#: the bundled task apps, by name
NAMES: tuple[str, ...] = tuple(TASK_APPS)


def _base(backend_url: str) -> str:
    return backend_url.removesuffix("/api").rstrip("/")


def served_at(name: str, backend_url: str) -> str:
    """Where the embedded backend at ``backend_url`` serves the bundled task app ``name``."""
    return _base(backend_url) + task_app_path(name)


def example_task_app_url(name: str) -> str:
    """Where the embedded backend serves the bundled example task app ``name`` (started if need be).

    ``name`` is ``banking`` (prompt learning) or ``charclass`` (RL); pass the URL as ``--task-url``.
    """
    return local_backend().task_app_url(name)


def name_at(url: str, backend_url: str) -> str | None:
    """The bundled task app the embedded backend at ``backend_url`` serves at ``url``, if ``url`` is one."""
    prefix = _base(backend_url) + TASK_APP_PREFIX + "/"
    if not backend_url or not url.startswith(prefix):
        return None
    name = url[len(prefix):].split("/", 1)[0]
    return name if name in TASK_APPS else None


def moved(url: str, backend_url: str, embedded: bool, target: Target) -> str | None:
    """Where the running embedded backend (``target``) serves the bundled task app that the embedded backend
    at ``backend_url`` served at ``url`` (a job's), when that backend now listens elsewhere (a restart takes a
    new port); None otherwise."""
    if not (embedded and target.is_embedded and target.started) or name_at(url, backend_url) is None:
        return None
    old_base, new_base = _base(backend_url), _base(target.url)
    return None if old_base == new_base else new_base + url[len(old_base):]


def named_by(config: ConfigLike) -> str | None:
    """The bundled task app a config is written for, by the task it names (not by its URL)."""
    ref = get_flow(config.flow).task_app_ref(config)
    return next((n for n in ref.names if n in TASK_APPS), None) if ref is not None else None


def named_in(path: Path) -> str | None:
    """``named_by`` of the config at ``path``; None when it does not load."""
    try:
        return named_by(load_config(path))
    except SynthNbError:
        return None


def hint(target: Target) -> str:
    """What a failed task-app check adds on the embedded backend: where it serves the bundled task apps."""
    urls = " or ".join(f"{served_at(name, target.url)} ({name})" for name in NAMES)
    return (f"For the bundled examples, the embedded backend serves the task apps itself: pass --task-url {urls} "
            "(in a shell: --task-url \"$(synth-nb backend --task-app-url banking)\").")


def usage(name: str, url: str) -> str:
    """How a config of the flow the bundled task app ``name`` is an example for points at ``url``."""
    for flow in all_flows():
        keys = flow.override_keys.get("task_url")
        if flow.example_task_app == name and keys:
            *table, key = keys[0]
            return f"{key} = \"{url}\" in [{'.'.join(table)}]"
    return f"--task-url {url}"
