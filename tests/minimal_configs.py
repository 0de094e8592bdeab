"""The minimal valid TOML of each flow, shared by every test folder that needs one."""

from __future__ import annotations

import json
import re

import pytest

from synth_nb.config import ConfigError, load_config_text

MINIMAL_RL = """\
[algorithm]
type = "online"
method = "policy_gradient"
variety = "gspo"

[services]
task_url = "https://my-task-app.example.com"

[model]
base = "Qwen/Qwen3-4B"
trainer_mode = "lora"
label = "my-rl-run"

[compute]
gpu_type = "H100"
gpu_count = 2

[topology]
gpus_for_vllm = 1
gpus_for_training = 1

[rollout]
env_name = "math"
policy_name = "math-policy"
max_turns = 1
episodes_per_batch = 8
max_concurrent_rollouts = 4
"""

#: an RL config the embedded backend trains for real in seconds (the charclass task app, the tiny model;
#: task_url filled in): 2 steps x the first group (4) + 2 evaluation rounds (before, at the end) x 2 seeds
TINY_RL = """\
[algorithm]
type = "online"
method = "policy_gradient"
variety = "gspo"

[services]
task_url = "{task_url}"

[model]
base = "Qwen/Qwen3-0.6B"
trainer_mode = "full"
label = "charclass-tiny"

[compute]
gpu_type = "H100"
gpu_count = 1

[topology]
gpus_for_vllm = 1
gpus_for_training = 1

[rollout]
env_name = "charclass"
policy_name = "charclass-policy"
max_turns = 1
episodes_per_batch = 4
max_concurrent_rollouts = 8

[rollout.policy_config]
max_tokens = 12

[training]
num_epochs = 1
iterations_per_epoch = 2
max_turns = 1
batch_size = 1
group_size = 4
learning_rate = 2e-3

[evaluation]
instances = 2
every_n_iters = 2
seeds = [1000, 1001]
"""

MINIMAL_SFT = """\
[algorithm]
type = "offline"
method = "sft"
variety = "fft"

[job]
model = "Qwen/Qwen3-0.6B"
data = "train.jsonl"

[compute]
gpu_type = "H100"
gpu_count = 1
"""

MINIMAL_GEPA = """\
[prompt_learning]
algorithm = "gepa"
task_app_url = "http://127.0.0.1:8102"
results_folder = "results"

[prompt_learning.policy]
inference_mode = "synth_hosted"
provider = "groq"
model = "llama-3.1-8b-instant"

[prompt_learning.gepa.evaluation]
train_seeds = [0, 1, 2]
val_seeds = [3, 4]
"""

MINIMAL_MIPRO = """\
[prompt_learning]
algorithm = "mipro"
task_app_url = "http://127.0.0.1:8102"
results_folder = "results"

[prompt_learning.policy]
inference_mode = "synth_hosted"
provider = "openai"
model = "gpt-4o-mini"

[prompt_learning.mipro]
bootstrap_train_seeds = [0, 1, 2]
online_pool = [3, 4, 5]
"""

#: a GEPA config the embedded backend runs for real in seconds: the bundled banking task app (URL filled in
#: with ``.format(task_url=...)``), the torch-free keyword policy and the offline proposer
LOCAL_GEPA = """\
[prompt_learning]
algorithm = "gepa"
task_app_url = "{task_url}"
results_folder = "results"

[[prompt_learning.initial_prompt.messages]]
role = "system"
pattern = "Classify the customer query into one banking intent with the banking_classify tool."
order = 0

[[prompt_learning.initial_prompt.messages]]
role = "user"
pattern = "Customer Query: {{query}}\\n\\nAvailable Intents:\\n{{available_intents}}"
order = 1

[prompt_learning.policy]
inference_mode = "synth_hosted"
provider = "openai"
model = "gpt-4.1-mini"
local_policy = "keyword"

[prompt_learning.gepa]
env_name = "banking"

[prompt_learning.gepa.rollout]
budget = {budget}
max_concurrent = 4
minibatch_size = 4

[prompt_learning.gepa.evaluation]
train_seeds = [0, 1, 2, 3, 4, 5, 6, 7]
val_seeds = [8, 9, 10, 11]
test_pool = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]
validation_top_k = 1
"""


#: the bundled banking task app's prompt and keyword policy, shared by the real GEPA and MIPRO runs
BANKING_PROMPT = """\
[prompt_learning.initial_prompt]
id = "banking_intents"
name = "Banking intent classification"

[[prompt_learning.initial_prompt.messages]]
role = "system"
pattern = "You are an expert banking assistant that classifies customer queries into banking intents. Given a customer message, respond with exactly one intent label from the provided list using the `banking_classify` tool."
order = 0

[[prompt_learning.initial_prompt.messages]]
role = "user"
pattern = "Customer Query: {query}\\n\\nAvailable Intents:\\n{available_intents}\\n\\nClassify this query into one of the above banking intents using the tool call."
order = 1

[prompt_learning.initial_prompt.wildcards]
query = "REQUIRED"
available_intents = "REQUIRED"

[prompt_learning.policy]
inference_mode = "synth_hosted"
provider = "openai"
model = "gpt-4.1-mini"
temperature = 0.0
local_policy = "keyword"
"""


def banking_gepa(*, budget: int, rng_seed: int) -> str:
    """A real GEPA run on the banking task app (``tests/real_runs.py``)."""
    return f"""\
[prompt_learning]
algorithm = "gepa"
task_app_url = "http://127.0.0.1:8102"
task_app_id = "banking"
results_folder = "results"

{BANKING_PROMPT}
[prompt_learning.gepa]
env_name = "banking"
rng_seed = {rng_seed}

[prompt_learning.gepa.rollout]
budget = {budget}
max_concurrent = 8
minibatch_size = 8

[prompt_learning.gepa.evaluation]
train_seeds = {list(range(16))}
val_seeds = {list(range(80, 96))}
test_pool = {list(range(16))}
validation_top_k = 2
"""


BANKING_MIPRO = f"""\
[prompt_learning]
algorithm = "mipro"
task_app_url = "http://127.0.0.1:8102"
task_app_id = "banking"
results_folder = "results"

{BANKING_PROMPT}
[prompt_learning.mipro]
env_name = "banking"
num_iterations = 2
num_evaluations_per_iteration = 3
batch_size = 8
bootstrap_train_seeds = {list(range(32))}
online_pool = {list(range(80, 96))}
test_pool = {list(range(16))}
max_instructions = 3
max_demo_sets = 3
full_eval_every_k = 3
"""


def with_values(config: str, **values: object) -> str:
    """``config`` with the first ``key = ...`` line of each key named here set to its value: a test's variant
    of a shared config, so the config itself is written once."""
    for key, value in values.items():
        config, found = re.subn(rf"^{key} = .*$", f"{key} = {json.dumps(value)}", config, count=1, flags=re.M)
        assert found, f"no {key!r} in the config"
    return config


def config_problems(text: str, name: str) -> list[ConfigError]:
    """The problems loading ``text`` as the file ``name`` raises (it must raise)."""
    with pytest.raises(ConfigError) as info:
        load_config_text(text, name)
    return info.value.problems
