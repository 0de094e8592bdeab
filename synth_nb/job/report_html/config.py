"""The report's config and plan: what the job was sent with, as its bundle keeps it (masked when written:
the config file as it was, every request of the plan, the overrides given), folded, as text.

A job sent from elsewhere has no bundle here; the section says so instead of guessing.
"""

from __future__ import annotations

from pathlib import Path

from synth_nb.job.report_html._base import ReportSource, Section, details, e, pre
from synth_nb.secrets import mask_text

__all__ = ["BUNDLE_FILES", "config_section"]

#: the bundle's files this section shows (``synth_nb.pipeline.bundle.write_bundle`` writes them), with what each is
BUNDLE_FILES = (("config.toml", "The config file as it was when the job was submitted"),
                ("plan.json", "Every request the submission sent (the plan, as --dry-run --json prints it)"),
                ("overrides.json", "The command-line or wizard overrides the plan was built with"))
#: the longest file shown in full (a plan holding a big inline dataset is cut, the bundle keeps it whole)
MAX_CHARS = 200_000


def _read(path: Path, secrets: tuple[str, ...]) -> str | None:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    text = mask_text(text, secrets)  # masked when written; the job's own keys once more
    return text if len(text) <= MAX_CHARS else text[:MAX_CHARS] + f"\n… cut at {MAX_CHARS:,} characters"


def config_section(source: ReportSource) -> Section:
    folder = source.folder
    parts = []
    for name, what in BUNDLE_FILES:
        text = _read(folder / name, source.secrets) if folder is not None else None
        if text is not None:
            parts.append(details(f"{name}: {what} (secrets masked)", pre(text), open_=name == "config.toml"))
    if not parts:
        where = f" in {folder}/" if folder is not None else ""
        return Section("config", "Config and plan (masked)",
                       f"<p>No bundle of this job{e(where)}: it was not submitted from this folder, so what it was "
                       "sent with is not known here.</p>")
    return Section("config", "Config and plan (masked)", "".join(parts))
