"""The import graph of ``synth_nb`` keeps its layers: no circles, and no layer reaching where it must not.

Every ``import`` counts, wherever it sits: module level, inside a function, under ``TYPE_CHECKING``. An
import of ``a.b`` is an edge to the module ``a.b`` (a package means its ``__init__``); ``from a import b``
is an edge to ``a.b`` when that is a module, else to ``a``. Circles are looked for between modules, and
between packages: the first name under ``synth_nb`` (``config``, ``flows``), a top-level module such as
``plan`` or ``backend`` being its own node, so two packages never lean on each other.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import synth_nb

PACKAGE = Path(synth_nb.__file__).parent

def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _imported_names(module: str, path: Path) -> Iterator[tuple[str, int]]:
    """Every dotted name ``module`` imports (absolute, relative imports resolved), with its line."""
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")
                anchor = anchor[: len(anchor) - node.level + (1 if is_package else 0)]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                yield f"{base}.{alias.name}", node.lineno


def _target(name: str) -> str | None:
    """The synth_nb module an imported dotted name lands in (None outside the package)."""
    modules = _modules()
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


@cache
def _graph() -> dict[str, dict[str, int]]:
    """module -> {imported synth_nb module: first line of that import}."""
    graph: dict[str, dict[str, int]] = {}
    for module, path in _modules().items():
        edges: dict[str, int] = {}
        for name, line in _imported_names(module, path):
            target = _target(name) if name.split(".")[0] == "synth_nb" else None
            if target is not None and target != module:
                edges.setdefault(target, line)
        graph[module] = edges
    return graph


def _external_imports(module: str) -> Iterator[tuple[str, int]]:
    for name, line in _imported_names(module, _modules()[module]):
        if name.split(".")[0] != "synth_nb":
            yield name, line


def _cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """One concrete circle per strongly connected component (Tarjan), each as a closed path."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, {}):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [_circle_through(graph, set(component), component[0]) for component in components]


def _circle_through(graph: dict[str, dict[str, int]], members: set[str], start: str) -> list[str]:
    """A shortest path start -> ... -> start inside one component (breadth first)."""
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for nxt in sorted(graph[node]):
                if nxt == start:
                    return [*paths[node], start]
                if nxt in members and nxt not in paths:
                    paths[nxt] = [*paths[node], nxt]
                    following.append(nxt)
        frontier = following
    return [start]  # pragma: no cover - a component always closes


def _describe(circle: list[str]) -> str:
    graph = _graph()
    steps = [f"{a} (line {graph[a][b]})" for a, b in zip(circle, circle[1:], strict=False)]
    return " -> ".join([*steps, circle[-1]])


def _package_of(module: str) -> str:
    """``synth_nb.config.loader`` -> ``config``, ``synth_nb.plan`` -> ``plan``, ``synth_nb`` -> ``synth_nb``."""
    return module.split(".")[1] if "." in module else module


@cache
def _package_edges() -> dict[tuple[str, str], list[str]]:
    """(package, imported package) -> the module imports behind that edge (``module:line -> module``)."""
    edges: dict[tuple[str, str], list[str]] = {}
    for module, targets in _graph().items():
        for target, line in targets.items():
            pair = (_package_of(module), _package_of(target))
            if pair[0] != pair[1]:
                edges.setdefault(pair, []).append(f"{module}:{line} -> {target}")
    return edges


def _describe_packages(circle: list[str]) -> str:
    edges = _package_edges()
    steps = [f"{a} ({edges[(a, b)][0]})" for a, b in zip(circle, circle[1:], strict=False)]
    return " -> ".join([*steps, circle[-1]])


def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_the_graph_sees_every_module_and_function_level_imports() -> None:
    graph = _graph()
    assert "synth_nb.client._client" in graph and "synth_nb.job" in graph
    assert "synth_nb.notebook.magics" in graph["synth_nb"]  # imported inside load_ipython_extension


def test_there_is_no_import_circle() -> None:
    circles = [_describe(circle) for circle in _cycles(_graph())]
    assert not circles, "import circles:\n  " + "\n  ".join(circles)


def test_there_is_no_import_circle_between_packages() -> None:
    graph: dict[str, dict[str, int]] = {_package_of(module): {} for module in _graph()}
    for a, b in _package_edges():
        graph[a][b] = 0
    circles = [_describe_packages(circle) for circle in _cycles(graph)]
    assert not circles, "package import circles:\n  " + "\n  ".join(circles)


def test_the_client_imports_no_flow_job_notebook_or_cli() -> None:
    forbidden = ("synth_nb.flows", "synth_nb.job", "synth_nb.notebook", "synth_nb.cli")
    found = [f"{module}:{line} imports {target}"
             for module, edges in _graph().items() if _inside(module, "synth_nb.client")
             for target, line in edges.items() if any(_inside(target, f) for f in forbidden)]
    assert not found, "\n".join(found)


def test_only_the_flows_package_imports_a_flow_of_its_own() -> None:
    """Outside ``synth_nb.flows`` a flow is reached through the ``Flow`` interface (``get_flow(name)``), so
    a new kind of job needs no change in the job, notebook, pipeline, comparison or CLI layers."""
    flows = [name for name, path in _modules().items()
             if _inside(name, "synth_nb.flows") and name.count(".") == 2 and path.name == "__init__.py"]
    assert "synth_nb.flows.prompt_learning" in flows
    found = [f"{module}:{line} imports {target}"
             for module, edges in _graph().items() if not _inside(module, "synth_nb.flows")
             for target, line in edges.items() if any(_inside(target, flow) for flow in flows)]
    assert not found, "\n".join(found)


def test_only_the_notebook_package_imports_ipython() -> None:
    found = [f"{module}:{line} imports {name}"
             for module in _modules() if not _inside(module, "synth_nb.notebook")
             for name, line in _external_imports(module) if name.split(".")[0] == "IPython"]
    assert not found, "\n".join(found)


def test_the_local_backend_imports_nothing_else_from_synth_nb() -> None:
    found = [f"{module}:{line} imports {target}"
             for module, edges in _graph().items() if _inside(module, "synth_nb.local")
             for target, line in edges.items() if not _inside(target, "synth_nb.local")]
    assert not found, "\n".join(found)


def _imports_into(package: str, forbidden: str, allowed: tuple[str, ...] = ()) -> list[str]:
    return [f"{module}:{line} imports {target}"
            for module, edges in _graph().items() if _inside(module, package)
            for target, line in edges.items() if _inside(target, forbidden) and (module, target) not in allowed]


def test_the_flows_import_nothing_of_the_local_backend() -> None:
    """A flow says what a job is; the embedded backend is reached over HTTP like any other (its bundled task
    apps through ``synth_nb.pipeline.bundled_apps``). The SFT estimate's exact count with the embedded trainer's
    tokenizer is the one written-down exception, until the backend answers it."""
    allowed = tuple(("synth_nb.flows.sft.estimate", f"synth_nb.local.{name}")
                    for name in ("errors", "training.chat_data", "training.model_choice", "training.tokenizer"))
    found = _imports_into("synth_nb.flows", "synth_nb.local", allowed)
    assert not found, "\n".join(found)


def test_the_terminal_imports_nothing_of_the_notebook() -> None:
    """The terminal's preview is ``synth_nb.pipeline.preview``; ``synth-nb enable`` writing the kernel profile
    is the one written-down exception."""
    found = _imports_into("synth_nb.cli", "synth_nb.notebook",
                          (("synth_nb.cli.enable", "synth_nb.notebook.kernel_profile"),))
    assert not found, "\n".join(found)


def test_the_pipeline_prints_nothing() -> None:
    """An action says what it has to say through its ``say`` hook: the door decides where (the terminal's
    stderr, a notebook cell), so no door redirects stdout around an action."""
    found = []
    for module, path in _modules().items():
        if _inside(module, "synth_nb.pipeline"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
                    found.append(f"{module}:{node.lineno} calls print")
    assert not found, "\n".join(found)
