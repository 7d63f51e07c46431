"""python manage.py serve_model [--port 8080] [--host 127.0.0.1] [--threads N] [--n-ctx 2048] [--quantised]
                                [--gguf PATH]

Serves the embedded SmolLM2-135M-Instruct (or another GGUF file) with llama-cpp-python's OpenAI-compatible
server (the `server` dependency group: pip install --group pyproject.toml:server), the way the tests and
bench/models_server.py start it (inference/llama_serve.py): float32 weights written once under
var/models/llama-server (the numbers transformers computes with; --quantised serves the shipped Q4_1 file,
faster, log p about 0.1 away), float32 key/value caches, prompt log-probabilities on. It prints the URL
and what to put in a model configuration (library "server"), and runs until Ctrl-C or SIGTERM, which stop
the server with it.
"""
from __future__ import annotations

import signal
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from common.env import VAR_DIR


class Command(BaseCommand):
    help = "Serve the embedded SmolLM2 (or a GGUF file) with llama.cpp's OpenAI-compatible server, for a 'server' " \
           "model configuration."

    def add_arguments(self, parser):
        parser.add_argument("--port", type=int, default=8080, help="the port to listen on (default 8080)")
        parser.add_argument("--host", default="127.0.0.1",
                            help="the address to listen on (default 127.0.0.1, this machine only; 0.0.0.0 for a "
                                 "worker on another machine)")
        parser.add_argument("--threads", type=int, default=1, help="CPU threads of the server (default 1)")
        parser.add_argument("--n-ctx", type=int, default=2048, help="context length in tokens (default 2048)")
        parser.add_argument("--quantised", action="store_true",
                            help="serve the shipped Q4_1 weights as they are (faster; log p about 0.1 from the "
                                 "float32 numbers of the hf backend)")
        parser.add_argument("--gguf", default="", help="another GGUF file to serve (default: the embedded SmolLM2)")
        parser.add_argument("--wait", type=float, default=300.0,
                            help="seconds to wait for the server's first answer (default 300)")

    def handle(self, *args, **options):
        from inference import llama_serve

        try:
            import llama_cpp  # noqa: F401  (the server group's package)
        except ImportError:
            raise CommandError("llama-cpp-python is not installed here: pip install --group pyproject.toml:server "
                               "(a source build: cmake, gcc and g++, scripts/apt/test/server.txt).") from None
        if not 1 <= options["port"] <= 65535:
            raise CommandError("--port must be from 1 to 65535.")
        if options["gguf"]:
            model = Path(options["gguf"]).expanduser()
            if not model.is_file():
                raise CommandError(f"No GGUF file {options['gguf']!r}.")
            what = model.name
        elif options["quantised"]:
            model, what = llama_serve.embedded_gguf(), "SmolLM2-135M-Instruct (Q4_1, as shipped)"
        else:
            self.stdout.write("Writing SmolLM2's float32 weights (once) …")
            model, what = llama_serve.f32_gguf(), "SmolLM2-135M-Instruct (float32 weights)"
        log = VAR_DIR / "logs" / f"llama-server-{options['port']}.log"
        self.stdout.write(f"Starting llama.cpp's server on {options['host']}:{options['port']} (log: {log}) …")
        try:
            served = llama_serve.start(model, log=log, threads=options["threads"], port=options["port"],
                                       n_ctx=options["n_ctx"], host=options["host"], wait=options["wait"])
        except RuntimeError as exc:
            raise CommandError(str(exc)) from None
        signal.signal(signal.SIGTERM, _interrupt)
        self.stdout.write(self.style.SUCCESS(f"Serving {what} at {served.url}"))
        start = " start token <|im_start|>;" if not options["gguf"] else " start token: the model's BOS text;"
        self.stdout.write(f"A model configuration for it: library 'server'; server URLs {served.url};{start} source "
                          "optional (a note). Ctrl-C stops the server.")
        self.stdout.flush()
        try:
            code = served.process.wait()
        except KeyboardInterrupt:
            self.stdout.write("Stopping the server …")
            served.stop()
            return
        raise CommandError(f"The server stopped by itself (exit {code}); its log: {log}")


def _interrupt(signum, frame):
    raise KeyboardInterrupt
