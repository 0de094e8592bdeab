"""A package's public names imported on first use (PEP 562), so importing one of its modules is not all of them.

``synth-nb jobs`` reads ``synth_nb.job.registry``; importing it runs ``synth_nb/job/__init__.py`` first, and
a package that imported every module there would make the shortest command pay for the whole package (a
third of a second of CPU, measured by ``benchmarks/cli_start.py``). A package lists its names in a table
(name -> module) and imports them under ``TYPE_CHECKING`` for type checkers; ``exports`` gives the
module-level ``__getattr__`` that imports a name's module when the name is first asked for.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["exports"]


def exports(package: str, table: Mapping[str, str]) -> Callable[[str], Any]:
    """``__getattr__`` for ``package``: a name in ``table`` (name -> module) is imported from its module and
    kept in the package's namespace; any other name is an AttributeError."""

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
