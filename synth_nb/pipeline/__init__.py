"""One way from TOML configs to running jobs, shared by ``synth-nb`` and ``%synth_train``.

discover → load → resolve secrets → plan → submit / attach. The CLI and the notebook only turn their
arguments into one request and show what its action returns:

* ``flags``: the train flags (argparse data, shared by ``synth-nb train`` and ``%synth_train``);
* ``request``: the door-neutral ``Request`` and the one table that picks its action;
* ``actions``: each action's whole sequence (prepare, check, send, rerun, fork, attach, cancel, compare,
  jobs), built from the stages below;

* ``target``: where jobs go (``resolve_target``), the embedded backend (``local_backend``, a process
  shared by kernels and commands; ``example_task_app_url``) and the one rule for the API key sent
  (``api_key``: the embedded backend's own key always wins for it);
* ``backend_keys``: the resolved ENVIRONMENT_API_KEY handed to the embedded backend (``share_keys``);
* ``prepare``: config discovery (``discover``, ``choose_configs``), ``Prepared`` configs and the checks
  several configs must pass together;
* ``clients``: a plan submitted, or a job rebuilt, over a client of its own;
* ``follow``: what happens to sent or attached jobs until they end (watchdog, results and bundle, reporters,
  ``--record`` files);
* ``preflight``: the task app's ``/health`` checked from here before a job is created;
* ``card`` (with ``dry_rollout`` and ``estimate``): the pre-flight card of ``--check``;
* ``bundle``: what a job was submitted with and what it did, written when it ends; ``rerun`` submits a
  bundle's plan again.
"""

from typing import TYPE_CHECKING

from synth_nb._lazy import exports

if TYPE_CHECKING:
    from synth_nb.pipeline.backend_keys import share_keys
    from synth_nb.pipeline.bundle import RunRecord, find_bundle, record_run
    from synth_nb.pipeline.bundled_apps import example_task_app_url
    from synth_nb.pipeline.clients import rebuild_job, secret_values, submit_plan
    from synth_nb.pipeline.follow import record_path, start_recording
    from synth_nb.pipeline.preflight import (
        TaskAppCheck,
        TaskAppUnhealthy,
        check_task_app,
        preflight,
        require_healthy_task_apps,
        skip_requested,
    )
    from synth_nb.pipeline.prepare import (
        Prepared,
        SecretSources,
        build_overrides,
        check_together,
        choose_configs,
        discover,
        prepare_config,
        raise_problems,
        required_secrets,
    )
    from synth_nb.pipeline.target import (
        EmbeddedBackend,
        Target,
        api_key,
        attach_target,
        local_backend,
        resolve_target,
        stop_local_backend,
        use_local_backend,
    )

#: public name -> its module, imported on first use (``synth_nb._lazy``: a command that needs one module
#: of the package does not import all of them)
_EXPORTS = {
    "share_keys": "synth_nb.pipeline.backend_keys",
    "RunRecord": "synth_nb.pipeline.bundle",
    "find_bundle": "synth_nb.pipeline.bundle",
    "record_run": "synth_nb.pipeline.bundle",
    "example_task_app_url": "synth_nb.pipeline.bundled_apps",
    "attach_target": "synth_nb.pipeline.target",
    "rebuild_job": "synth_nb.pipeline.clients",
    "secret_values": "synth_nb.pipeline.clients",
    "submit_plan": "synth_nb.pipeline.clients",
    "record_path": "synth_nb.pipeline.follow",
    "start_recording": "synth_nb.pipeline.follow",
    "TaskAppCheck": "synth_nb.pipeline.preflight",
    "TaskAppUnhealthy": "synth_nb.pipeline.preflight",
    "check_task_app": "synth_nb.pipeline.preflight",
    "preflight": "synth_nb.pipeline.preflight",
    "require_healthy_task_apps": "synth_nb.pipeline.preflight",
    "skip_requested": "synth_nb.pipeline.preflight",
    "Prepared": "synth_nb.pipeline.prepare",
    "SecretSources": "synth_nb.pipeline.prepare",
    "build_overrides": "synth_nb.pipeline.prepare",
    "check_together": "synth_nb.pipeline.prepare",
    "choose_configs": "synth_nb.pipeline.prepare",
    "discover": "synth_nb.pipeline.prepare",
    "prepare_config": "synth_nb.pipeline.prepare",
    "raise_problems": "synth_nb.pipeline.prepare",
    "required_secrets": "synth_nb.pipeline.prepare",
    "EmbeddedBackend": "synth_nb.pipeline.target",
    "Target": "synth_nb.pipeline.target",
    "api_key": "synth_nb.pipeline.target",
    "local_backend": "synth_nb.pipeline.target",
    "resolve_target": "synth_nb.pipeline.target",
    "stop_local_backend": "synth_nb.pipeline.target",
    "use_local_backend": "synth_nb.pipeline.target",
}
__getattr__ = exports(__name__, _EXPORTS)

__all__ = [
    "EmbeddedBackend",
    "Prepared",
    "RunRecord",
    "SecretSources",
    "TaskAppCheck",
    "TaskAppUnhealthy",
    "Target",
    "api_key",
    "attach_target",
    "build_overrides",
    "check_task_app",
    "check_together",
    "choose_configs",
    "discover",
    "find_bundle",
    "example_task_app_url",
    "local_backend",
    "preflight",
    "prepare_config",
    "raise_problems",
    "rebuild_job",
    "record_path",
    "record_run",
    "require_healthy_task_apps",
    "required_secrets",
    "resolve_target",
    "secret_values",
    "share_keys",
    "skip_requested",
    "start_recording",
    "stop_local_backend",
    "submit_plan",
    "use_local_backend",
]
