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

from synth_nb.pipeline.backend_keys import share_keys
from synth_nb.pipeline.bundle import RunRecord, find_bundle, record_run
from synth_nb.pipeline.bundled_apps import example_task_app_url
from synth_nb.pipeline.clients import attach_target, rebuild_job, secret_values, submit_plan
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
    local_backend,
    resolve_target,
    stop_local_backend,
    use_local_backend,
)

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
