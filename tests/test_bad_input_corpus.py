"""Bad-input corpus: hundreds of malformed configs, datasets and flag values run through ``synth-nb train
--dry-run`` in-process. Every one must give exit code 2, exactly one ``error:`` message that names the file
(with the line and ``[table.key]`` where there is one) or the flag, no traceback, no secret, and nothing on
stdout that parses as a plan. Besides the written cases, 300 bad flag values are generated (hypothesis, the same
ones on every run): counts that are not whole numbers in range, ``nan`` minutes, seed ranges of 10**11, job ids
with ``..``, ``/`` or control characters, URLs with port 0, paths with control characters, flags that would do
nothing without another.

Elsewhere, because they need a subprocess, a FIFO or a server: ``--dry-run --json | true``
(tests/cli/test_main.py), a symlink-loop or FIFO ``.env`` (tests/secrets/test_dotenv.py), ``synth-nb backend``
inputs (tests/cli/test_backend_hardening.py, tests/local/test_stale_info_file.py); credentials in ``--backend http://user:KEY@host`` are
accepted input, masked in every output (tests/cli/test_backend_credentials.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from minimal_configs import MINIMAL_GEPA, MINIMAL_MIPRO, MINIMAL_RL, MINIMAL_SFT

from synth_nb.cli.main import main
from synth_nb.untrusted import JOB_ID_MAX, job_id_problem

SYNTH_KEY = "sk_synth_CANARY_corpus_0123456789abcdef"
ENV_KEY = "sk_env_CANARY_corpus_fedcba9876543210"
GOOD_LINE = '{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}'
CONFIG = "cfg.toml"
DATA = "train.jsonl"
MINIMAL = {"gepa": MINIMAL_GEPA, "mipro": MINIMAL_MIPRO, "rl": MINIMAL_RL, "sft": MINIMAL_SFT}


@dataclass
class Case:
    """One malformed input: the files written into an empty folder, extra flags, what the error must name."""

    name: str
    files: dict[str, str | bytes]
    names: tuple[str, ...]
    flags: tuple[str, ...] = ()
    configs: tuple[str, ...] = (CONFIG,)
    json_output: bool = True
    dry_run: bool = True
    env: dict[str, str] = field(default_factory=dict)
    #: symlinks made in the folder: name -> what it points at
    links: dict[str, str] = field(default_factory=dict)


def _with_data(text: str | bytes, data: str | bytes = GOOD_LINE + "\n") -> dict[str, str | bytes]:
    return {CONFIG: text, DATA: data}


def _files(text: str | bytes, flow: str = "") -> dict[str, str | bytes]:
    return _with_data(text) if flow == "sft" else {CONFIG: text}


# -- TOML that does not parse -----------------------------------------------------------------------------

def _syntax_cases() -> Iterator[Case]:
    broken = {
        "unterminated-string": ('[job]\nmodel = "Qwen/Qwen3-0.6B\n', 2),
        "unterminated-multiline-string": ('[job]\nmodel = """Qwen\n\n', 4),  # found at the end
        "unterminated-literal-string": ("[job]\nmodel = 'Qwen\n", 3),
        "unterminated-array": ("[job]\nseeds = [1, 2\nother = 3\n", 3),
        "unterminated-inline-table": ("[job]\nx = {a = 1\n", 2),
        "inline-table-over-lines": ("[job]\nx = {a = 1,\n b = 2}\n", 2),
        "duplicate-key": ('[job]\nmodel = "a"\nmodel = "b"\n', 3),
        "duplicate-table": ("[job]\na = 1\n[job]\nb = 2\n", 3),
        "key-without-value": ("[job]\nmodel =\n", 2),
        "value-without-key": ('[job]\n= "x"\n', 2),
        "bare-word-value": ("[job]\nmodel = qwen\n", 2),
        "missing-equals": ('[job]\nmodel "x"\n', 2),
        "bad-escape": ('[job]\nmodel = "\\q"\n', 2),
        "bad-date": ("[job]\nwhen = 2024-13-45\n", 2),
        "leading-zero": ("[job]\nn = 012\n", 2),
        "double-underscore": ("[job]\nn = 1__0\n", 2),
        "double-sign": ("[job]\nn = +-1\n", 2),
        "unclosed-header": ("[job\nmodel = 1\n", 1),
        "empty-header": ("[]\n", 1),
        "header-dot-end": ("[job.]\n", 1),
        "array-table-clash": ("[job]\na = 1\n[[job]]\n", 3),
        "dotted-key-clash": ("a = 1\na.b = 2\n", 2),
        "control-character": ("[job]\nmodel = \"a\x01b\"\n", 2),
        "trailing-garbage": ('[job]\nmodel = "a" b\n', 2),
        "nul-byte": ("[job]\nmodel = 1\n\x00\n", 3),
        "tab-in-key": ("[job]\nmo\tdel = 1\n", 2),
        "float-trailing-dot": ("[job]\nn = 1.\n", 2),
        "inf-typo": ("[job]\nn = infinity\n", 2),
    }
    for name, (text, line) in broken.items():
        yield Case(f"toml-{name}", {CONFIG: text}, (f"{CONFIG}:{line}", "invalid TOML"))
    yield Case("toml-binary", {CONFIG: b"\x00\x01\x02\xff\xfe\x00garbage"}, (f"{CONFIG}:1", "UTF-8"))
    yield Case("toml-utf16", {CONFIG: "[job]\nmodel = 1\n".encode("utf-16")}, (f"{CONFIG}:1", "UTF-8"))
    yield Case("toml-latin1", {CONFIG: '[job]\nmodel = "caf\xe9"\n'.encode("latin-1")}, (f"{CONFIG}:2", "UTF-8"))
    for depth in (500, 2000):
        deep = MINIMAL_GEPA + "\n[prompt_learning.env_config]\nx = " + "[" * depth + "]" * depth + "\n"
        yield Case(f"toml-nested-arrays-{depth}", {CONFIG: deep}, (f"{CONFIG}:16", "nested"))
        inline = MINIMAL_GEPA + "\n[prompt_learning.env_config]\nx = " + "{a = " * depth + "1" + "}" * depth + "\n"
        yield Case(f"toml-nested-inline-tables-{depth}", {CONFIG: inline}, (f"{CONFIG}:16", "nested"))
    medium = MINIMAL_GEPA + "\n[prompt_learning.env_config]\nx = " + "[" * 100 + "]" * 100 + "\n"
    yield Case("toml-nested-arrays-100", {CONFIG: medium}, (f"{CONFIG}:16", "[prompt_learning.env_config.x", "nested"))
    header = MINIMAL_SFT + "\n[tags." + ".".join(["t"] * 100) + "]\nk = 1\n"
    yield Case("toml-deep-table-header", _files(header, "sft"), (f"{CONFIG}:14", "[tags.t.t", "nested"))


# -- files that are not training configs ----------------------------------------------------------------

def _not_a_config_cases() -> Iterator[Case]:
    texts = {
        "empty": "", "blank": "\n\n   \n", "comments-only": "# nothing\n# here\n", "bom-only": "\ufeff",
        "title-only": 'title = "x"\n', "pyproject": "[tool.ruff]\nline-length = 100\n",
        "unknown-algorithm-type": '[algorithm]\ntype = "batch"\nmethod = "x"\nvariety = "y"\n',
        "algorithm-as-string": 'algorithm = "online"\n', "job-without-compute": '[job]\nmodel = "Qwen/Qwen3-4B"\n',
        "rollout-only": '[rollout]\nenv_name = "x"\n',
    }
    for name, text in texts.items():
        yield Case(f"not-config-{name}", {CONFIG: text}, (CONFIG, "not a training config"))
    yield Case("missing-file", {}, ("nope.toml", "not found"), configs=("nope.toml",))
    yield Case("not-toml-suffix", {"cfg.yaml": MINIMAL_SFT}, ("cfg.yaml", ".toml"), configs=("cfg.yaml",))
    yield Case("directory", {"sub/x.txt": ""}, ("sub", "not a file"), configs=("sub",))
    yield Case("pl-table-not-a-table", {CONFIG: "prompt_learning = 5\n"}, (f"{CONFIG}:1", "[prompt_learning]"))
    yield Case("pl-unknown-algorithm", {CONFIG: MINIMAL_GEPA.replace('"gepa"', '"evolve"', 1)},
               (f"{CONFIG}:2", "[prompt_learning.algorithm]"))


# -- every key of every minimal config, with a value of the wrong type or out of range ----------------------

_KEY_LINE = re.compile(r"^(\w+) = (.+)$")
_HEADER = re.compile(r"^\[([\w.]+)\]$")
#: keys whose value decides which flow claims the file (a wrong type makes it "not a training config")
_DETECTION = {("algorithm", "type"), ("algorithm", "method")}


def _wrong_values(value: str) -> list[tuple[str, str]]:
    if value.startswith('"'):
        return [("int", "5"), ("bool", "true"), ("array", '["x"]'), ("table", "{ a = 1 }")]
    if value.startswith("["):
        return [("bools", "[true, false]"), ("negative", "[0, -1]"), ("beyond-int64", "[9223372036854775808]"),
                ("strings", '["0", "1"]'), ("floats", "[0.5]"), ("nested", "[[0]]"), ("string", '"0,1,2"'),
                ("inf", "[inf]")]
    return [("quoted", f'"{value}"'), ("bool", "true"), ("float", "1.5"), ("negative", "-1"), ("inf", "inf"),
            ("nan", "nan"), ("huge", "99999999999999999999")]


def _type_cases() -> Iterator[Case]:
    for flow, text in MINIMAL.items():
        table = ""
        lines = text.splitlines()
        for number, line in enumerate(lines, start=1):
            header = _HEADER.match(line)
            if header:
                table = header.group(1)
                continue
            found = _KEY_LINE.match(line)
            if not found or (table, found.group(1)) in _DETECTION:
                continue
            key, value = found.groups()
            for label, wrong in _wrong_values(value):
                if flow in ("gepa", "mipro") and key == "algorithm" and label != "int":
                    continue  # a non-string algorithm is covered once; the rest say the same
                mutated = "\n".join([*lines[: number - 1], f"{key} = {wrong}", *lines[number:]]) + "\n"
                dotted = f"{table}.{key}" if table else key
                yield Case(f"{flow}-{dotted}-{label}", _files(mutated, flow), (f"{CONFIG}:{number}", f"[{dotted}"))


# -- values of the right type that the flows refuse ----------------------------------------------------------

def _line_of(text: str, new: str) -> int:
    """The line of the last line of ``new`` in ``text`` (where the key the error names is written)."""
    return text[: text.index(new)].count("\n") + new.count("\n") + 1


def _semantic_cases() -> Iterator[Case]:
    gepa, mipro, rl, sft = MINIMAL_GEPA, MINIMAL_MIPRO, MINIMAL_RL, MINIMAL_SFT
    policy_line = 'model = "llama-3.1-8b-instant"'
    pl = [
        ("temperature-inf", policy_line + "\ntemperature = inf", "prompt_learning.policy.temperature"),
        ("temperature-nan", policy_line + "\ntemperature = nan", "prompt_learning.policy.temperature"),
        ("temperature-negative", policy_line + "\ntemperature = -0.5", "prompt_learning.policy.temperature"),
        ("max-tokens-string", policy_line + '\nmax_completion_tokens = "64"',
         "prompt_learning.policy.max_completion_tokens"),
        ("max-tokens-zero", policy_line + "\nmax_completion_tokens = 0",
         "prompt_learning.policy.max_completion_tokens"),
        ("unknown-model", 'model = "gpt-9000"', "prompt_learning.policy.model"),
        ("inference-url-in-policy", policy_line + '\ninference_url = "http://x"',
         "prompt_learning.policy.inference_url"),
    ]
    for name, new, key in pl:
        text = gepa.replace(policy_line, new)
        yield Case(f"gepa-{name}", {CONFIG: text}, (f"{CONFIG}:{_line_of(text, new)}", f"[{key}]"))
    simple = [
        ("gepa-provider", gepa, 'provider = "groq"', 'provider = "acme"', "prompt_learning.policy.provider"),
        ("gepa-inference-mode", gepa, 'inference_mode = "synth_hosted"', 'inference_mode = "local"',
         "prompt_learning.policy.inference_mode"),
        ("gepa-task-url-scheme", gepa, 'task_app_url = "http://127.0.0.1:8102"', 'task_app_url = "ftp://x"',
         "prompt_learning.task_app_url"),
        ("gepa-no-train-seeds", gepa, "train_seeds = [0, 1, 2]", "train_seeds = []",
         "prompt_learning.gepa.evaluation.train_seeds"),
        ("gepa-mutation-rate", gepa, "val_seeds = [3, 4]",
         "val_seeds = [3, 4]\n\n[prompt_learning.gepa.mutation]\nrate = 1.5", "prompt_learning.gepa.mutation.rate"),
        ("gepa-population-size", gepa, "val_seeds = [3, 4]",
         "val_seeds = [3, 4]\n\n[prompt_learning.gepa.population]\ninitial_size = 0",
         "prompt_learning.gepa.population.initial_size"),
        ("mipro-empty-online-pool", mipro, "online_pool = [3, 4, 5]", "online_pool = []",
         "prompt_learning.mipro.online_pool"),
        ("mipro-reference-overlap", mipro, "online_pool = [3, 4, 5]", "online_pool = [3, 4, 5]\nreference_pool = [3]",
         "prompt_learning.mipro.reference_pool"),
        ("mipro-negative-pool", mipro, "online_pool = [3, 4, 5]", "online_pool = [3, -4]",
         "prompt_learning.mipro.online_pool[1]"),
        ("rl-gpu-toaster", rl, 'gpu_type = "H100"', 'gpu_type = "TOASTER"', "compute.gpu_type"),
        ("rl-gpu-count-zero", rl, "gpu_count = 2", "gpu_count = 0", "compute.gpu_count"),
        ("rl-unknown-model", rl, 'base = "Qwen/Qwen3-4B"', 'base = "Llama-7B"', "model.base"),
        ("rl-non-rl-model", rl, 'base = "Qwen/Qwen3-4B"', 'base = "Qwen/Qwen3-32B"', "model.base"),
        ("rl-trainer-mode", rl, 'trainer_mode = "lora"', 'trainer_mode = "magic"', "model.trainer_mode"),
        ("rl-task-url-scheme", rl, 'task_url = "https://my-task-app.example.com"', 'task_url = "my-task-app"',
         "services.task_url"),
        ("rl-placement", rl, "gpus_for_training = 1", 'gpus_for_training = 1\nreference_placement = "moon"',
         "topology"),
        ("sft-gpu-toaster", sft, 'gpu_type = "H100"', 'gpu_type = "TOASTER"', "compute.gpu_type"),
        ("sft-unknown-model", sft, 'model = "Qwen/Qwen3-0.6B"', 'model = "gpt2"', "job.model"),
        ("sft-finetuned-model", sft, 'model = "Qwen/Qwen3-0.6B"', 'model = "ft:Qwen/Qwen3-0.6B:abc"', "job.model"),
        ("sft-learning-rate-inf", sft, "gpu_count = 1", "gpu_count = 1\n\n[hyperparameters]\nlearning_rate = inf",
         "hyperparameters.learning_rate"),
        ("sft-warmup-ratio", sft, "gpu_count = 1", "gpu_count = 1\n\n[hyperparameters]\nwarmup_ratio = 2.0",
         "hyperparameters.warmup_ratio"),
        ("sft-n-epochs-string", sft, "gpu_count = 1", 'gpu_count = 1\n\n[hyperparameters]\nn_epochs = "3"',
         "hyperparameters.n_epochs"),
        ("sft-lora-dropout", sft, "gpu_count = 1", "gpu_count = 1\n\n[training.lora]\ndropout = -0.1",
         "training.lora.dropout"),
        ("gepa-task-url-nul", gepa, 'task_app_url = "http://127.0.0.1:8102"',
         'task_app_url = "http://127.0.0.1:8102\\u0000"', "prompt_learning.task_app_url"),
        ("gepa-task-url-crlf", gepa, 'task_app_url = "http://127.0.0.1:8102"',
         'task_app_url = "http://127.0.0.1:8102\\r\\n"', "prompt_learning.task_app_url"),
        ("gepa-task-url-port-99999", gepa, 'task_app_url = "http://127.0.0.1:8102"',
         'task_app_url = "http://127.0.0.1:99999"', "prompt_learning.task_app_url"),
        ("gepa-task-url-arabic-indic-digits", gepa, 'task_app_url = "http://127.0.0.1:8102"',
         'task_app_url = "http://127.0.0.1:\u0668\u0661\u0660\u0662"', "prompt_learning.task_app_url"),
        ("gepa-results-folder-empty", gepa, 'results_folder = "results"', 'results_folder = ""',
         "prompt_learning.results_folder"),
        ("gepa-results-folder-blank", gepa, 'results_folder = "results"', 'results_folder = "  "',
         "prompt_learning.results_folder"),
        ("rl-task-url-port-99999", rl, 'task_url = "https://my-task-app.example.com"',
         'task_url = "http://my-task-app.example.com:99999"', "services.task_url"),
        ("rl-task-url-crlf", rl, 'task_url = "https://my-task-app.example.com"',
         'task_url = "https://my-task-app.example.com\\r\\n"', "services.task_url"),
        ("sft-n-epochs-huge", sft, "gpu_count = 1", "gpu_count = 1\n\n[hyperparameters]\nn_epochs = 1000000000000",
         "hyperparameters.n_epochs"),
        ("sft-free-table-nan", sft, "gpu_count = 1", "gpu_count = 1\n\n[tags]\nscore = nan", "tags.score"),
        ("sft-free-table-huge", sft, "gpu_count = 1", "gpu_count = 1\n\n[tags]\nn = -99999999999999999999",
         "tags.n"),
    ]
    for name, base, old, new, key in simple:
        assert old in base, name
        text = base.replace(old, new, 1)
        yield Case(name, _files(text, name.split("-")[0]), (f"{CONFIG}:{_line_of(text, new)}", f"[{key}"))
    spec = gepa.replace("[prompt_learning.gepa.evaluation]",
                        '[prompt_learning.gepa]\nproposer_type = "spec"\n\n[prompt_learning.gepa.evaluation]')
    yield Case("gepa-spec-without-path", {CONFIG: spec}, (f"{CONFIG}:", "[prompt_learning.gepa.spec_path]"))
    triples = [("online", "sft", "gspo"), ("online", "policy_gradient", "ppo"), ("offline", "sft", "gspo"),
               ("offline", "dpo", "fft"), ("offline", "supervised_finetune", "lora")]
    for kind, method, variety in triples:
        base = rl if kind == "online" else sft
        text = base.replace('method = "policy_gradient"', f'method = "{method}"').replace(
            'method = "sft"', f'method = "{method}"').replace('variety = "gspo"', f'variety = "{variety}"').replace(
            'variety = "fft"', f'variety = "{variety}"')
        yield Case(f"algorithm-{kind}-{method}-{variety}", _files(text, "sft" if kind == "offline" else ""),
                   (CONFIG, "[algorithm."))
    missing = [
        ("rl-no-compute", rl, "[compute]", "compute"), ("rl-no-rollout", rl, "[rollout]", "rollout"),
        ("rl-no-topology", rl, "[topology]", "topology"), ("sft-no-compute", sft, "[compute]", "compute"),
        ("gepa-no-policy", gepa, "[prompt_learning.policy]", "prompt_learning.policy"),
        ("gepa-no-evaluation", gepa, "[prompt_learning.gepa.evaluation]", "prompt_learning.gepa"),
        ("mipro-no-mipro", mipro, "[prompt_learning.mipro]", "prompt_learning.mipro"),
    ]
    for name, base, header, key in missing:
        start = base.index(header)
        end = base.find("\n[", start + 1)
        text = base[:start] + (base[end + 1:] if end > 0 else "")
        yield Case(name, _files(text, name.split("-")[0]), (CONFIG, f"[{key}"))


# -- SFT datasets -----------------------------------------------------------------------------------------------

def _dataset_cases() -> Iterator[Case]:
    good = GOOD_LINE + "\n"
    bad_lines = {
        "bad-json": "{not json",
        "truncated-json": '{"messages": [',
        "not-an-object": "[1, 2, 3]",
        "a-number": "42",
        "no-messages": '{"prompt": "hi", "completion": "yo"}',
        "empty-messages": '{"messages": []}',
        "role-wizard": '{"messages": [{"role": "wizard", "content": "hi"}, {"role": "assistant", "content": "yo"}]}',
        "role-missing": '{"messages": [{"content": "hi"}, {"role": "assistant", "content": "yo"}]}',
        "empty-content": '{"messages": [{"role": "user", "content": ""}, {"role": "assistant", "content": "yo"}]}',
        "no-assistant": '{"messages": [{"role": "user", "content": "hi"}]}',
        "content-number": '{"messages": [{"role": "user", "content": 5}, {"role": "assistant", "content": "yo"}]}',
        "bad-part": '{"messages": [{"role": "user", "content": [{"type": "audio"}]}, '
                    '{"role": "assistant", "content": "yo"}]}',
        "tool-calls-not-list": '{"messages": [{"role": "user", "content": "hi"}, '
                               '{"role": "assistant", "tool_calls": {"x": 1}}]}',
        "tool-args-bad-json": '{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", '
                              '"tool_calls": [{"function": {"name": "f", "arguments": "{"}}]}]}',
        "nested-600": '{"messages": ' + "[" * 600 + "]" * 600 + "}",
        "nested-100000": '{"messages": ' + "[" * 100_000 + "]" * 100_000 + "}",
    }
    for name, line in bad_lines.items():
        data = good + good + line + "\n" + good
        yield Case(f"dataset-{name}", _with_data(MINIMAL_SFT, data), (f"{DATA}:3",))
    yield Case("dataset-invalid-utf8", _with_data(MINIMAL_SFT, (good + good).encode() + b'{"x": "\xff"}\n'),
               (f"{DATA}:3", "UTF-8"))
    yield Case("dataset-empty", _with_data(MINIMAL_SFT, ""), (DATA, "no examples"))
    yield Case("dataset-blank-lines", _with_data(MINIMAL_SFT, "\n\n  \n"), (DATA, "no examples"))
    yield Case("dataset-binary", _with_data(MINIMAL_SFT, b"\x00\x01\x02\xff" * 10), (f"{DATA}:1",))
    yield Case("dataset-missing", {CONFIG: MINIMAL_SFT}, (DATA, "not found"))
    yield Case("dataset-flag-missing", {CONFIG: MINIMAL_SFT}, ("nope.jsonl", "not found"),
               flags=("--dataset", "nope.jsonl"))
    yield Case("dataset-symlink-loop", {CONFIG: MINIMAL_SFT.replace(DATA, "loop.jsonl")}, ("loop.jsonl",),
               links={"loop.jsonl": "loop.jsonl"})
    yield Case("dataset-flag-symlink-loop", {CONFIG: MINIMAL_SFT}, ("loop.jsonl", "--dataset"),
               flags=("--dataset", "loop.jsonl"), links={"loop.jsonl": "loop.jsonl"})
    yield Case("dataset-flag-bad-line", {CONFIG: MINIMAL_SFT, "other.jsonl": good + "{oops\n"}, ("other.jsonl:2",),
               flags=("--dataset", "other.jsonl"))


# -- flag values --------------------------------------------------------------------------------------------------

def _flag_cases() -> Iterator[Case]:
    gepa, rl, sft = _files(MINIMAL_GEPA), _files(MINIMAL_RL), _with_data(MINIMAL_SFT)
    flags = [
        ("model-synth-key-rl", rl, ("--model", SYNTH_KEY), "--model"),
        ("model-env-key-rl", rl, ("--model", ENV_KEY), "--model"),
        ("model-synth-key-sft", sft, ("--model", SYNTH_KEY), "--model"),
        ("model-token-sft", sft, ("--model", "0123456789abcdef0123456789abcdef"), "--model"),
        ("model-unknown-rl", rl, ("--model", "Llama-7B"), "--model"),
        ("model-unknown-sft", sft, ("--model", "gpt2"), "--model"),
        ("model-blank", sft, ("--model", "   "), "--model"),
        ("task-url-synth-key", gepa, ("--task-url", SYNTH_KEY), "--task-url"),
        ("task-url-env-key", rl, ("--task-url", ENV_KEY), "--task-url"),
        ("task-url-no-scheme", gepa, ("--task-url", "127.0.0.1:8102"), "--task-url"),
        ("task-url-ftp", gepa, ("--task-url", "ftp://127.0.0.1"), "--task-url"),
        ("task-url-space", gepa, ("--task-url", "http://exa mple.com"), "--task-url"),
        ("task-url-no-host", rl, ("--task-url", "http://"), "--task-url"),
        ("task-url-bad-port", rl, ("--task-url", "http://host:99999"), "--task-url"),
        ("backend-space", gepa, ("--backend", "http://exa mple.com"), "--backend"),
        ("backend-no-host", gepa, ("--backend", "http://"), "--backend"),
        ("backend-no-host-https", gepa, ("--backend", "https:///api"), "--backend"),
        ("backend-ftp", gepa, ("--backend", "ftp://example.com"), "--backend"),
        ("backend-no-scheme", gepa, ("--backend", "localhost:8000"), "--backend"),
        ("backend-bad-port", gepa, ("--backend", "http://localhost:99999"), "--backend"),
        ("backend-bad-ipv6", gepa, ("--backend", "http://[::1"), "--backend"),
        ("backend-newline", gepa, ("--backend", "http://example.com\n/api"), "--backend"),
        ("backend-synth-key", gepa, ("--backend", SYNTH_KEY), "--backend"),
        ("backend-empty", gepa, ("--backend", ""), "--backend"),
        ("backend-blank", gepa, ("--backend", "  "), "--backend"),
        ("backend-arabic-indic-port", gepa, ("--backend", "http://localhost:\u0668\u0660\u0660\u0660"), "--backend"),
        ("model-empty-sft", sft, ("--model", ""), "--model"),
        ("model-empty-gepa", gepa, ("--model", ""), "--model"),
        ("model-zero-width-space", sft, ("--model", "Qwen/Qwen3-0.6B\u200b"), "--model"),
        ("model-zero-width-space-gepa", gepa, ("--model", "llama-3.1-8b-instant\u200b"), "--model"),
        ("task-url-empty", gepa, ("--task-url", ""), "--task-url"),
        ("task-url-arabic-indic-port", gepa, ("--task-url", "http://127.0.0.1:\u0668\u0661\u0660\u0662"),
         "--task-url"),
        ("task-url-nul", gepa, ("--task-url", "http://127.0.0.1:8102/\x00"), "--task-url"),
        ("idempotency-empty", gepa, ("--idempotency", ""), "--idempotency"),
        ("idempotency-control", gepa, ("--idempotency", "a\rb"), "--idempotency"),
        ("dataset-synth-key", sft, ("--dataset", SYNTH_KEY), "--dataset"),
        ("examples-zero", sft, ("--examples", "0"), "--examples"),
        ("examples-negative", sft, ("--examples", "-2"), "--examples"),
        ("examples-not-a-number", sft, ("--examples", "ten"), "--examples"),
        ("examples-float", sft, ("--examples", "1.5"), "--examples"),
        ("idempotency-blank", gepa, ("--idempotency", "   "), "--idempotency"),
        ("unknown-flag", gepa, ("--frobnicate",), "--frobnicate"),
        ("stream-format", gepa, ("--stream-format", "html"), "--stream-format"),
        ("allow-experimental-value", gepa, ("--allow-experimental=yes",), "--allow-experimental"),
    ]
    for name, files, args, flag in flags:
        yield Case(f"flag-{name}", files, (flag,), flags=args)
    yield Case("flag-json-without-dry-run", _files(MINIMAL_GEPA), ("--json", "--dry-run"), dry_run=False)
    yield Case("flag-config-without-path", {}, ("--config",), configs=(), flags=("--config",))
    yield Case("flag-idempotency-two-configs", {CONFIG: MINIMAL_GEPA, "b.toml": MINIMAL_MIPRO}, ("--idempotency",),
               configs=(CONFIG, "b.toml"), flags=("--idempotency", "same-key"))
    yield Case("flag-one-of-two-configs-bad", {CONFIG: MINIMAL_GEPA, "b.toml": MINIMAL_MIPRO.replace("[3, 4, 5]", "[]")},
               ("b.toml:13", "[prompt_learning.mipro.online_pool]"), configs=(CONFIG, "b.toml"))
    yield Case("env-backend-override-space", _files(MINIMAL_GEPA), ("SYNTH_BACKEND_OVERRIDE",),
               env={"SYNTH_BACKEND_OVERRIDE": "http://exa mple.com"})
    for flag in ("--poll-interval", "--poll-timeout"):
        for label, value in (("negative", "-1"), ("minus-five", "-5"), ("zero", "0"), ("nan", "nan"), ("inf", "inf"),
                             ("minus-inf", "-inf"), ("word", "soon"), ("empty", ""), ("key", SYNTH_KEY)):
            yield Case(f"flag-{flag[2:]}-{label}", _files(MINIMAL_GEPA), (flag,), flags=(f"{flag}={value}",))
    yield Case("flag-config-trailing-slash", _files(MINIMAL_GEPA), (f"{CONFIG}/", "slash"), configs=(f"{CONFIG}/",))
    for flag in ("--env-file", "--config", "--record"):
        yield Case(f"flag-{flag[2:]}-empty-path", _files(MINIMAL_GEPA), (flag,), flags=(f"{flag}=",))


# -- .env files ---------------------------------------------------------------------------------------------------

def _env_file_cases() -> Iterator[Case]:
    bad = {
        "not-utf8": (b"A=1\nSYNTH_API_KEY=\xff\xfe\n", "x.env:2"),
        "nul-bytes": (b"A=1\n\x00\x00\n", "x.env:2"),
        "unparsable": (f"A=1\nSYNTH_API_KEY {SYNTH_KEY}\n".encode(), "x.env:2"),
        "unterminated-quote": (f"ENVIRONMENT_API_KEY='{ENV_KEY}\n".encode(), "x.env:1"),
        "key-without-equals": (b"# keys\nSYNTH_API_KEY\n", "x.env:2"),
        "utf16": ("SYNTH_API_KEY=x\n".encode("utf-16"), "x.env:1"),
        "key-with-a-space": (b"A=1\n'MY KEY'=1\n", "x.env:2"),
        "key-with-a-tab": (b"'SYNTH_API_KEY\t'=1\n", "x.env:1"),
    }
    for name, (content, where) in bad.items():
        yield Case(f"env-file-{name}", {CONFIG: MINIMAL_GEPA, "x.env": content}, (where,), flags=("--env-file", "x.env"))
        discovered = where.replace("x.env", ".env")
        yield Case(f"env-discovered-{name}", {CONFIG: MINIMAL_GEPA, ".env": content}, (discovered,))
    yield Case("env-file-device", _files(MINIMAL_GEPA), ("/dev/zero", "regular file"),
               flags=("--env-file", "/dev/zero"))
    yield Case("env-file-over-1-mib", {CONFIG: MINIMAL_GEPA, "x.env": "A=" + "x" * (1024 * 1024) + "\n"},
               ("x.env", "larger than"), flags=("--env-file", "x.env"))
    yield Case("env-file-million-lines", {CONFIG: MINIMAL_GEPA, "x.env": "A=1\n" * 1_000_000}, ("x.env", "larger"),
               flags=("--env-file", "x.env"))
    yield Case("env-file-too-many-lines", {CONFIG: MINIMAL_GEPA, "x.env": "A=1\n" * 20_000}, ("x.env", "lines"),
               flags=("--env-file", "x.env"))
    yield Case("env-file-missing", _files(MINIMAL_GEPA), ("nope.env", "not found"), flags=("--env-file", "nope.env"))
    yield Case("env-file-folder", {CONFIG: MINIMAL_GEPA, "envs/a": ""}, ("envs", "folder"), flags=("--env-file", "envs"))
    yield Case("env-file-unknown-home", _files(MINIMAL_GEPA), ("~nosuchuser1234/x.env",),
               flags=("--env-file", "~nosuchuser1234/x.env"))
    yield Case("env-file-second-of-two-bad", {CONFIG: MINIMAL_GEPA, "a.env": "A=1\n", "b.env": b"\xff"},
               ("b.env:1",), flags=("--env-file", "a.env", "--env-file", "b.env"))


CASES = [*_syntax_cases(), *_not_a_config_cases(), *_type_cases(), *_semantic_cases(), *_dataset_cases(),
         *_flag_cases(), *_env_file_cases()]
_ran: list[str] = []


@pytest.fixture()
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for var in ("SYNTH_BACKEND_OVERRIDE", "TASK_APP_URL", "SDK_EXPERIMENTAL", "SDK_EXPERIMENTAL_MODELS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("SYNTH_API_KEY", SYNTH_KEY)
    monkeypatch.setenv("ENVIRONMENT_API_KEY", ENV_KEY)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _run(case: Case, folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
         ) -> tuple[object, str, str]:
    for name, content in case.files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    for name, pointee in case.links.items():
        (folder / name).symlink_to(pointee)
    for var, value in case.env.items():
        monkeypatch.setenv(var, value)
    argv = ["train"]
    for config in case.configs:
        argv += ["--config", config]
    argv += ["--dry-run"] if case.dry_run else []
    argv += ["--json"] if case.json_output else []
    argv += list(case.flags)
    try:
        code: object = main(argv)
    except SystemExit as exc:  # argparse usage errors
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def _parses_as_plan(out: str) -> bool:
    try:
        doc = json.loads(out)
    except ValueError:
        return "step 1/" in out or "dry run:" in out
    docs = doc if isinstance(doc, list) else [doc]
    return any(isinstance(d, dict) and "steps" in d for d in docs)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_input_gives_one_clear_error_and_exit_2(case: Case, folder: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(case, folder, monkeypatch, capsys)
    _ran.append(case.name)
    assert code == 2, f"exit {code}\nstdout: {out[:500]}\nstderr: {err[:1000]}"
    assert "Traceback" not in err and "Traceback" not in out
    errors = [line for line in err.splitlines() if re.match(r"^(synth-nb( train)?: )?error: ", line)]
    assert len(errors) == 1, err
    for name in case.names:
        assert name in err, f"{name!r} not in:\n{err}"
    assert SYNTH_KEY not in out + err and ENV_KEY not in out + err
    assert not _parses_as_plan(out), out[:500]


def test_the_corpus_is_large_and_every_case_ran(capsys: pytest.CaptureFixture[str]) -> None:
    names = [c.name for c in CASES]
    assert len(names) == len(set(names)), "case names must be unique"
    assert len(CASES) >= 150
    with capsys.disabled():
        print(f"\nbad-input corpus: {len(_ran)} of {len(CASES)} cases ran")


def _no_constants(name: str) -> object:
    raise AssertionError(f"{name} is not JSON")


@pytest.mark.parametrize("flow", sorted(MINIMAL))
def test_dry_run_json_of_valid_configs_is_strict_json(flow: str, folder: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    for name, content in _files(MINIMAL[flow], flow).items():
        (folder / name).write_text(str(content))
    assert main(["train", "--config", CONFIG, "--dry-run", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out, parse_constant=_no_constants)
    assert doc["flow"] == ("prompt_learning" if flow in ("gepa", "mipro") else flow)


@pytest.mark.parametrize(("flow", "flags"), [
    ("gepa", ("--idempotency", SYNTH_KEY)),
    ("rl", ("--task-url", f"http://127.0.0.1:9/?k={ENV_KEY}")),
    ("gepa", ("--task-url", f"http://127.0.0.1:9/{SYNTH_KEY}")),
])
def test_a_secret_in_an_accepted_flag_is_masked_in_the_preview(flow: str, flags: tuple[str, ...], folder: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    (folder / CONFIG).write_text(MINIMAL[flow])
    assert main(["train", "--config", CONFIG, "--dry-run", *flags]) == 0
    out, err = capsys.readouterr()
    assert "dry run: 1 valid plan(s)" in out
    assert SYNTH_KEY not in out + err and ENV_KEY not in out + err


# -- generated bad flag values ----------------------------------------------------------------------------------
#
# hypothesis draws 300 (config, flag, value) triples from a strategy per kind of flag value, the same 300 on
# every run (``derandomize``): each must be refused with one line and exit 2, whatever flow the config is of
# (a flow that ignores a flag still refuses a bad value for it), or a flag given where it does nothing.

_COUNT_FLAGS = ("--examples", "--max-rollouts", "--max-tokens", "--stop-on-plateau", "--rollout-budget", "--iterations")


def _bad_counts() -> st.SearchStrategy[str]:
    return st.one_of(
        st.integers(max_value=0).map(str), st.integers(min_value=2**63, max_value=10**40).map(str),
        st.floats(allow_nan=True, allow_infinity=True).filter(lambda f: not f.is_integer()).map(repr),
        st.text(alphabet="abcxyz_-.,eE ", min_size=1, max_size=8).filter(lambda t: not t.strip().isdigit()),
        st.sampled_from(["", " ", "1_0", "\u0663", "\uff15", "0x10", "1e3", "nan", "inf", "--1", "+-1", "1 2"]))


def _bad_minutes() -> st.SearchStrategy[str]:
    return st.one_of(st.floats(max_value=0).map(repr), st.sampled_from(["nan", "NaN", "inf", "-inf", "1e400", "", " ",
                                                                         "1_0", "\u0665", "0x1p3", "soon"]))


def _bad_seeds() -> st.SearchStrategy[str]:
    numbers = st.integers(min_value=0, max_value=10**12)
    return st.one_of(
        st.tuples(numbers, numbers).filter(lambda p: p[0] > p[1]).map(lambda p: f"{p[0]}-{p[1]}"),  # reversed
        st.integers(min_value=100_000, max_value=10**12).map(lambda n: f"0-{n}"),  # far too many
        st.sampled_from(["", " ", "a", "-1", "1,,2", "0-", "\u0661", "1.5", "0-3,a", "0--3", "3-3-3", "1;2"]))


def _bad_job_ids() -> st.SearchStrategy[str]:
    return st.one_of(
        st.text(min_size=1, max_size=12).filter(lambda t: job_id_problem(t) is not None),
        st.text(alphabet="abc/.\\", min_size=1, max_size=12).filter(lambda t: job_id_problem(t) is not None),
        st.integers(min_value=JOB_ID_MAX + 1, max_value=6000).map(lambda n: "a" * n),
        st.sampled_from(["..", ".", "../x", "/etc", "pl_\x1b[2J", "pl_a\x00", "pl_\u202e"]))


def _bad_urls() -> st.SearchStrategy[str]:
    host = st.sampled_from(["127.0.0.1", "example.com", "[::1]"])
    bad_port = st.one_of(st.just(0), st.integers(min_value=65536, max_value=10**7))
    return st.one_of(
        st.builds(lambda h, p: f"http://{h}:{p}", host, bad_port),
        st.text(alphabet="abc:/.", max_size=12).filter(lambda t: not t.lower().startswith(("http://", "https://"))),
        st.sampled_from(["http://", "https://", "http:// h", "http://h\x1b/", "file:///etc/passwd", "javascript:x",
                         "http://h\u202e/", "ftp://h"]))


def _bad_paths() -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from(["", " ", "   "]),
                     st.builds(lambda a, c: f"{a}{c}.jsonl", st.text(alphabet="abc", max_size=4),
                               st.sampled_from(["\x1b", "\x07", "\n", "\u202e", "\x9b"])))


#: (flag, strategy of bad values); a flag given alone (``None``) is one that does nothing without another
_GENERATED: tuple[tuple[str, st.SearchStrategy[str] | None], ...] = (
    *((flag, _bad_counts()) for flag in _COUNT_FLAGS),
    ("--max-minutes", _bad_minutes()), ("--train-seeds", _bad_seeds()),
    *((flag, _bad_job_ids()) for flag in ("--attach", "--rerun", "--fork", "--compare")),
    ("--backend", _bad_urls()), ("--task-url", _bad_urls()),
    *((flag, _bad_paths()) for flag in ("--record", "--out", "--env-file", "--config")),
    ("--mlflow-experiment", st.sampled_from(["", " ", "\x1b"])),
    ("--idempotency", st.integers(min_value=256, max_value=5000).map(lambda n: "k" * n)),
    ("--out", None), ("--all-events", None), ("--report-dir", None), ("--mlflow-experiment", None),
)
_IGNORED_ALONE = {"--out": "x.toml", "--report-dir": "runs", "--mlflow-experiment": "exp"}


@st.composite
def _generated_case(draw: st.DrawFn) -> tuple[str, str, tuple[str, ...]]:
    flow = draw(st.sampled_from(("gepa", "rl", "sft")))
    flag, values = draw(st.sampled_from(_GENERATED))
    if values is None:
        value = _IGNORED_ALONE.get(flag)
        return flow, flag, (flag,) if value is None else (f"{flag}={value}",)
    return flow, flag, (f"{flag}={draw(values)}",)


@settings(max_examples=300, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=_generated_case())
def test_generated_bad_flag_values_exit_2_with_one_line(case: tuple[str, str, tuple[str, ...]], folder: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    flow, flag, args = case
    (folder / CONFIG).write_text(MINIMAL[flow], encoding="utf-8")
    (folder / DATA).write_text(GOOD_LINE + "\n", encoding="utf-8")
    try:
        code: object = main(["train", "--config", CONFIG, "--dry-run", "--json", *args])
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    assert code == 2, f"{flow} {args!r}: exit {code}\n{err[-1000:]}"
    errors = [line for line in err.splitlines() if re.match(r"^(synth-nb( train)?: )?error: ", line)]
    assert len(errors) == 1 and flag in errors[0], err
    assert "Traceback" not in err and not _parses_as_plan(out)
    assert SYNTH_KEY not in out + err and ENV_KEY not in out + err

