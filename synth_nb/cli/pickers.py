"""Arrow-key pickers for ``synth-nb train`` on a terminal: which config(s) to train, which ``.env`` to read.

They appear only when both stdin and stdout are terminals (``is_interactive``, the one rule the "Submit?"
question follows too); in CI, pipes (``… | tee log``) and notebooks the callers keep their plain errors, so
nothing ever blocks on a prompt nobody can answer. Ctrl-C or Esc at a picker raises ``KeyboardInterrupt``
(the CLI exits 130 and has sent nothing). questionary draws the prompts.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from synth_nb.errors import SecretsError
from synth_nb.untrusted import inert

__all__ = ["EnvChoice", "describe_env_file", "env_file_candidates", "is_interactive", "pick_configs",
           "pick_env_file"]

_SKIP_DIRS = {"node_modules", "site-packages", "__pycache__", "venv", "dist", "build"}
_MAX_ENV_FILES = 20
_MAX_DEPTH = 3


def is_interactive(stdin: TextIO | None = None, stdout: TextIO | None = None) -> bool:
    """True when a person can answer a prompt: both ends are terminals and ``TERM`` is not ``dumb``.

    stdout is the one the process was started with (``sys.__stdout__``): while preparing, ``train`` sends
    what ``sys.stdout`` says to stderr, and a run piped into ``tee`` must not count as a terminal there and
    as none at "Submit?".
    """
    stdin = stdin or sys.stdin
    stdout = stdout or sys.__stdout__
    try:
        ttys = stdin.isatty() and stdout is not None and stdout.isatty()
    except (AttributeError, ValueError):  # closed or replaced streams
        return False
    return bool(ttys) and os.environ.get("TERM", "") != "dumb"


def _relative(path: Path, root: Path) -> str:
    try:
        return str(path.resolve().relative_to(root.resolve()))
    except ValueError:
        return str(path)


def config_title(candidate: Any, root: Path, width: int | None = None) -> str:
    """``configs/gepa.toml  [prompt_learning/gepa]  valid`` (or ``invalid: <first problem>``), cut with ``…``
    to ``width`` characters when given (the picker's rows: a terminal would crop them mid-word)."""
    kind = (candidate.flow or "unreadable") + (f"/{candidate.algorithm}" if candidate.algorithm else "")
    title = f"{_relative(candidate.path, root)}  [{kind}]  {_state(candidate)}"
    return title if width is None or len(title) <= width else title[:max(1, width - 1)] + "…"


def _problem(candidate: Any) -> str:
    """The first problem without the file name the row already shows (``line 12 [key]: …``)."""
    first = (candidate.error or "").splitlines()[0] if candidate.error else "cannot be read"
    for prefix in (str(candidate.path), str(candidate.path.resolve())):
        if first.startswith(prefix + ":"):
            return "line " + first[len(prefix) + 1:]
    return first


def _state(candidate: Any) -> str:
    return "valid" if candidate.valid else "invalid: " + _problem(candidate)[:110]


def pick_configs(candidates: Sequence[Any], root: Path) -> list[Path]:
    """Ask which training configs to submit (several may be ticked; invalid ones are shown, not selectable).

    Enter with nothing ticked picks the highlighted row; typing filters the rows; Esc cancels like
    Ctrl-C (``KeyboardInterrupt``). ``candidates`` are ``synth_nb.config.DiscoveredConfig`` rows.
    Returns the chosen paths in list order.
    """
    import questionary

    if not any(c.valid for c in candidates):
        raise _no_valid(candidates, root)
    invalid = [c for c in candidates if not c.valid]
    if invalid:  # in full above the list, where the terminal wraps them; a row is cut to the width
        print(f"{len(invalid)} of {len(candidates)} training configs cannot be submitted:", file=sys.stderr)
        print("\n".join(inert(f"  {_relative(c.path, root)}: {_problem(c)}") for c in invalid), file=sys.stderr,
              flush=True)  # a file's words: shown, never obeyed
    width = shutil.get_terminal_size().columns - len(" » ○ ") - 1
    choices = [questionary.Choice(config_title(c, root, width), value=c.path,
                                  disabled=None if c.valid else "cannot be submitted",
                                  checked=False)
               for c in candidates]
    question = questionary.checkbox(
        "Which config(s) should be trained?",
        choices=choices,
        use_search_filter=True, use_jk_keys=False,
        instruction="(enter picks the highlighted one, space ticks several, type to filter, esc cancels)",
    )
    _enter_picks_the_highlighted_row(question)
    _esc_cancels(question)
    answer = question.unsafe_ask()
    return [Path(p) for p in answer]


def _add_bindings(question: Any, bindings: Any) -> None:
    """Bindings added after questionary's win over them."""
    from prompt_toolkit.key_binding import merge_key_bindings

    app = question.application
    app.key_bindings = merge_key_bindings([app.key_bindings, bindings])


def _esc_cancels(question: Any) -> None:
    """Esc leaves the picker like Ctrl-C (``KeyboardInterrupt``: exit 130, nothing sent)."""
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.keys import Keys

    ours = KeyBindings()

    @ours.add(Keys.Escape, eager=True)
    def _cancel(event: Any) -> None:
        event.app.exit(exception=KeyboardInterrupt, style="class:aborting")

    _add_bindings(question, ours)


def _enter_picks_the_highlighted_row(question: Any) -> None:
    """Enter with nothing ticked answers the highlighted row (questionary would only ask to tick one, on
    the terminal's last row)."""
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.keys import Keys
    from questionary.prompts.common import InquirerControl

    control = next(c for c in question.application.layout.find_all_controls() if isinstance(c, InquirerControl))
    ours = KeyBindings()

    @ours.add(Keys.ControlM, eager=True, filter=_nothing_ticked(control))
    def _pick(event: Any) -> None:
        pointed = control.get_pointed_at()
        control.selected_options = [pointed.value]
        control.is_answered = True
        event.app.exit(result=[pointed.value])

    _add_bindings(question, ours)


def _nothing_ticked(control: Any) -> Any:
    from prompt_toolkit.filters import Condition

    @Condition
    def nothing() -> bool:
        pointed = control.get_pointed_at() if control.filtered_choices else None
        return not control.selected_options and pointed is not None and not pointed.disabled

    return nothing


def _no_valid(candidates: Sequence[Any], root: Path) -> Exception:
    from synth_nb.errors import ConfigError

    listing = "\n".join(f"  {config_title(c, root)}" for c in candidates)
    return ConfigError(f"none of the {len(candidates)} training configs under {root} is valid:\n{listing}",
                       hint="fix the first problem shown, or pass --config PATH")


def env_file_candidates(folders: Sequence[Path], cwd: Path) -> list[Path]:
    """The ``.env`` files a run could read, nearest first, without duplicates (at most 20).

    Each folder's nearest ``.env`` (itself or a parent: what resolution reads today), then ``.env``
    files up to three levels below the working directory (hidden folders and virtualenvs skipped).
    """
    found: list[Path] = []

    def add(path: Path) -> None:
        real = path.resolve()
        if real.is_file() and real not in found and len(found) < _MAX_ENV_FILES:
            found.append(real)

    for folder in [*folders, cwd]:
        for above in [folder.resolve(), *folder.resolve().parents]:
            if (above / ".env").is_file():
                add(above / ".env")
                break
    base_depth = len(cwd.resolve().parts)
    for parent, dirs, files in os.walk(cwd):
        depth = len(Path(parent).resolve().parts) - base_depth
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIP_DIRS
                         and not os.path.exists(os.path.join(parent, d, "pyvenv.cfg")) and depth < _MAX_DEPTH)
        if ".env" in files:
            add(Path(parent) / ".env")
    return found


@dataclass(frozen=True)
class EnvChoice:
    """One ``.env`` file and, for each required key, its masked value or ``None`` when absent."""

    path: Path
    keys: dict[str, str | None]
    error: str | None = None

    @property
    def complete(self) -> bool:
        return self.error is None and all(v is not None for v in self.keys.values())


def describe_env_file(path: Path, required: Sequence[str]) -> EnvChoice:
    """Which of ``required`` the file holds, masked (a file that cannot be read says why)."""
    from synth_nb.secrets import mask
    from synth_nb.secrets._dotenv import read_dotenv

    try:
        values = read_dotenv(path)
    except SecretsError as exc:
        return EnvChoice(path, {k: None for k in required}, error=str(exc))
    return EnvChoice(path, {k: (mask(values[k]) if values.get(k) else None) for k in required})


def env_title(choice: EnvChoice, root: Path) -> str:
    where = _relative(choice.path, root)
    if choice.error:
        return f"{where}  (unreadable: {choice.error.splitlines()[0][:80]})"
    keys = ", ".join(f"{k} {v}" if v else f"{k} missing" for k, v in choice.keys.items())
    return f"{where}  ({keys or 'no keys needed'})"


def pick_env_file(candidates: Sequence[Path], required: Sequence[str], root: Path) -> Path:
    """Ask which ``.env`` to read (its keys then beat the environment, like ``--env-file``); Esc cancels
    like Ctrl-C (``KeyboardInterrupt``)."""
    import questionary

    described = [describe_env_file(p, required) for p in candidates]
    choices = [questionary.Choice(env_title(c, root), value=str(c.path),
                                  disabled="cannot be read" if c.error else None)
               for c in described]
    default = next((str(c.path) for c in described if c.complete), None)
    question = questionary.select(
        f"{len(candidates)} .env files found; which one holds the keys for this run?",
        choices=choices, default=default, use_shortcuts=len(choices) <= 9,
        instruction="(arrows move, enter picks, esc cancels)",
    )
    _esc_cancels(question)
    return Path(question.unsafe_ask())
