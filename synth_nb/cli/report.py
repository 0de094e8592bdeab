"""``synth-nb report JOB [--html PATH]`` and ``synth-nb report --compare ID ID … [--html PATH]``: write one
self-contained HTML file (``synth_nb.job.report_html``) that any browser opens from a shared folder with the
network off, and GitHub, VS Code and Colab show as it is.

The job is found as ``synth-nb attach`` finds it (``--backend``, else the job registry, else the default) and
its history read, not followed; a job that has not ended is reported as it stands. The report goes to
``--html PATH``, else to ``report.html`` in the job's folder (beside its result files and bundle); a
comparison (``synth_nb.compare``'s own HTML) to ``--html PATH``, else ``comparison.html`` here.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from synth_nb.pipeline.request import Request

__all__ = ["COMPARISON_FILE", "configure", "run"]

#: where ``--compare`` writes its page without ``--html PATH``
COMPARISON_FILE = "comparison.html"


def configure(parser: argparse.ArgumentParser) -> None:
    from synth_nb.pipeline.flags import SECRET_FLAGS, TARGET_FLAGS, add_flags, job_id

    parser.add_argument("job_id", nargs="?", metavar="JOB_ID", type=job_id, default=None,
                        help="The job to report (see `synth-nb jobs`).")
    parser.add_argument("--compare", nargs="+", metavar="ID", type=job_id, default=None,
                        help="Report several jobs side by side (curves, final metrics, config differences).")
    parser.add_argument("--html", metavar="PATH", default=None,
                        help=f"Where to write the HTML file (default: report.html in the job's folder; "
                             f"{COMPARISON_FILE} here with --compare).")
    add_flags(parser, TARGET_FLAGS, SECRET_FLAGS)


def run(args: argparse.Namespace) -> int:
    from synth_nb.errors import ConfigError
    from synth_nb.pipeline.request import Request

    if (args.job_id is None) == (args.compare is None):
        raise ConfigError("name one job (synth-nb report JOB) or the jobs to compare (synth-nb report --compare "
                          "ID ID …)", key="JOB_ID")
    request = Request.from_args(args, Path.cwd(), anchor=False)
    path = Path(args.html) if args.html else None
    written, secrets = _compare(request, path) if args.compare is not None else _job(request, args.job_id, path)
    from synth_nb.secrets import mask_text

    print(mask_text(f"Wrote {written}", secrets))
    return 0


def _job(request: Request, job_id: str, path: Path | None) -> tuple[Path, tuple[str, ...]]:
    import asyncio

    from synth_nb.cli.follow import note
    from synth_nb.pipeline import actions

    found = actions.attachment(request, job_id, start_local=False, say=note)

    async def report() -> Path:
        job = await actions.attach(found, request)
        try:
            return await asyncio.to_thread(job.to_html, path)
        finally:
            await job.client.aclose()

    return asyncio.run(report()), tuple(found.hidden)


def _compare(request: Request, path: Path | None) -> tuple[Path, tuple[str, ...]]:
    from synth_nb.comparison import compare_request
    from synth_nb.job.report_html import comparison_page

    comparison = compare_request(request)
    target = path or Path(COMPARISON_FILE)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(comparison_page(comparison.title, comparison.to_html()), encoding="utf-8")
    return target, ()
