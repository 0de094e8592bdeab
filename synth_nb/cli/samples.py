"""``synth-nb attach JOB_ID --rollouts`` / ``--samples``: print the samples behind a job's numbers and return.

The job's history is rebuilt from its backend (as ``attach`` does), then its sampled RL rollouts or SFT
completions are listed (``synth_nb.flows.samples.SampleTable.to_text``): one header line per sample (step,
seed, reward…), its prompt and completion indented below. Every text the backend sent is made inert
(``synth_nb.untrusted``) and the job's secrets are masked. The job is not followed: a running job keeps
running, and the command ends once the listing is printed.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TextIO

from synth_nb.errors import ConfigError
from synth_nb.flows.sample_rows import SampleFilter
from synth_nb.job.samples import sample_table
from synth_nb.pipeline import actions
from synth_nb.pipeline.request import Request
from synth_nb.secrets import mask_text

__all__ = ["add_sample_flags", "print_samples", "wants_samples"]

#: rows listed when neither --step nor --worst/--best narrows the listing
DEFAULT_LIMIT = 40


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {value}")
    return value


def add_sample_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("samples behind the numbers (print them and return; the job is not followed)")
    kinds = group.add_mutually_exclusive_group()
    kinds.add_argument("--rollouts", action="store_true",
                       help="List an RL job's sampled rollouts: prompt, completion, reward, advantage, seed.")
    kinds.add_argument("--samples", action="store_true",
                       help="List an SFT job's sample completions beside their reference answers, step by step.")
    group.add_argument("--step", type=_positive, metavar="N", help="Only the samples of step N.")
    group.add_argument("--worst", type=_positive, metavar="K", help="Only the K lowest-scored (reward, similarity).")
    group.add_argument("--best", type=_positive, metavar="K", help="Only the K highest-scored.")


def wants_samples(args: argparse.Namespace) -> bool:
    """Whether to list samples (``--rollouts`` / ``--samples``); a narrowing flag without either is a
    ConfigError (exit 2), not silently ignored."""
    wanted = bool(getattr(args, "rollouts", False) or getattr(args, "samples", False))
    narrowing = [flag for flag, value in (("--step", args.step), ("--worst", args.worst), ("--best", args.best))
                 if value is not None]
    if narrowing and not wanted:
        raise ConfigError(f"{', '.join(narrowing)} narrows a listing of samples: add --rollouts (RL) or "
                          "--samples (SFT)")
    return wanted


def print_samples(args: argparse.Namespace, request: Request, out: TextIO | None = None) -> int:
    """Rebuild the job's history and print its samples; 0 once printed (ConfigError, exit 2, for a job of a
    flow that has none)."""
    out = out or sys.stdout
    found = actions.attachment(request, start_local=False, say=lambda text: print(text, file=sys.stderr))
    kind = "rollouts" if args.rollouts else "samples"
    selection = SampleFilter(step=args.step, worst=args.worst, best=args.best)

    async def listing() -> tuple[str, str]:
        job = await actions.attach(found, request)
        try:
            table = sample_table(job, kind, selection)
            narrowed = args.step is not None or args.worst or args.best
            text = table.to_text(limit=None if narrowed else DEFAULT_LIMIT)
            state = "" if job.terminal else f"job {job.id} is still {job.status}: these are the {kind} so far\n"
            return text, state
        finally:
            await job.client.aclose()

    text, state = asyncio.run(listing())
    print(mask_text(text, tuple(found.hidden)), end="", file=out, flush=True)
    if state:
        print(mask_text(state, tuple(found.hidden)), end="", file=sys.stderr, flush=True)
    return 0
