#!/usr/bin/env python3
#! Runs the local default LLM for Remind: the llama.cpp server inside the xllamacpp wheel (which has no CLI), OpenAI-compatible, with CORS for the page.
"""Serve a GGUF model over llama.cpp's OpenAI-compatible HTTP API until SIGINT/SIGTERM.

Endpoints (llama.cpp's own): /health, /v1/models, /v1/completions, /v1/chat/completions.
llama.cpp answers CORS itself (preflight and Access-Control-Allow-Origin); it is limited
here to the page's origin (--cors-origin), so other web pages cannot use the model.

Run with the venv's python (scripts/setup-llm makes it):
  ~/.cache/remind/llm-venv/bin/python scripts/llm-server.py [--host H] [--port P] [--model F]
"""
import argparse
import os
import signal
import sys
import threading
import time

CACHE = os.environ.get("REMIND_CACHE", os.path.expanduser("~/.cache/remind"))
DEFAULT_MODEL = os.path.join(CACHE, "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf")
DEFAULT_ORIGIN = "http://127.0.0.1:8080"


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8081)
    p.add_argument("--model", default=DEFAULT_MODEL, help="GGUF file (default: %(default)s)")
    p.add_argument("--ctx-size", type=int, default=4096)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--parallel", type=int, default=1, help="server slots (requests served at once)")
    p.add_argument(
        "--cors-origin",
        default=os.environ.get("REMIND_LLM_CORS_ORIGIN", DEFAULT_ORIGIN),
        help="the one origin allowed to call the API from a browser, or '*' for any (default: %(default)s)",
    )
    p.add_argument("--verbosity", type=int, default=1, help="llama.cpp log verbosity")
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if not os.path.isfile(args.model):
        print(f"llm-server: model file not found: {args.model} (run scripts/setup-llm)", file=sys.stderr)
        return 2
    try:
        import xllamacpp
    except ImportError as e:
        print(f"llm-server: cannot import xllamacpp ({e}); run it with {CACHE}/llm-venv/bin/python", file=sys.stderr)
        return 2

    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.hostnames = [args.host]
    params.port = args.port
    params.n_ctx = args.ctx_size
    params.n_parallel = args.parallel
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    # llama.cpp sends cors_origins verbatim as Access-Control-Allow-Origin (so it must be
    # one origin; a comma list is not valid there); "*" makes it echo the request's Origin.
    params.cors_origins = args.cors_origin
    params.cors_origins_explicit = args.cors_origin != "*"
    params.cors_methods = "GET, POST, OPTIONS"
    params.cors_headers = "content-type, authorization"
    params.cors_credentials = False
    params.verbosity = args.verbosity

    stop = threading.Event()

    def on_signal(signum, _frame):
        print(f"llm-server: {signal.Signals(signum).name}, stopping", file=sys.stderr, flush=True)
        stop.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)

    t0 = time.monotonic()
    print(f"llm-server: loading {args.model} (ctx {args.ctx_size}, {args.threads} threads)", file=sys.stderr, flush=True)
    # Server(params) loads the model and starts llama.cpp's HTTP server on its own
    # threads; it returns once listening, and stops when the object is destroyed.
    server = xllamacpp.Server(params)
    print(
        f"llm-server: listening on {server.listening_address} after {time.monotonic() - t0:.1f}s; "
        f"OpenAI base URL http://{args.host}:{args.port}/v1; CORS origin {args.cors_origin}",
        file=sys.stderr,
        flush=True,
    )
    while not stop.wait(1.0):
        pass
    del server
    print("llm-server: stopped", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
