"""The generators an evaluation runs, each behind the real app of the workspace.

- ``extractive``: the shipped default;
- ``adversary``: the scripted model that obeys every injection (``adversary``), behind the real
  ``OpenAICompatGenerator``;
- ``smollm2``: a real local model, SmolLM2-135M-Instruct on llama.cpp's server
  (``local_model``), behind the same generator, with a short reply budget.

``generator_apps`` starts the model servers the chosen generators need and stops them after.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from typing import Any

from citewall.errors import UserError
from citewall.generation.factory import build_generator
from citewall.generation.protocols import Generator
from citewall_evals import local_model
from citewall_evals.redteam import adversary
from citewall_evals.workspace import EvalWorkspace

GENERATORS = ("extractive", "adversary", "smollm2")
#: Reply budget of the local model: enough for two or three sentences, cheap on one thread.
LOCAL_MODEL_MAX_TOKENS = 80


def openai_generator(
    ws: EvalWorkspace, base_url: str, model: str, *, max_tokens: int, timeout_s: float
) -> Generator:
    """The production OpenAI-compatible generator, pointed at ``base_url``."""
    settings = ws.settings.model_copy(
        update={
            "generator": "openai",
            "openai_base_url": base_url,
            "openai_model": model,
            "openai_retries": 0,
            "openai_timeout_s": timeout_s,
            "openai_max_tokens": max_tokens,
        }
    )
    return build_generator(settings, ws.embedder)


@contextmanager
def generator_apps(ws: EvalWorkspace, names: Sequence[str]) -> Iterator[dict[str, Any]]:
    """``{name: app}`` for each of ``names``, with the model servers they need running."""
    unknown = [n for n in names if n not in GENERATORS]
    if unknown:
        raise UserError(f"unknown generator {unknown[0]!r}; use {', '.join(GENERATORS)}")
    with ExitStack() as stack:
        apps: dict[str, Any] = {}
        for name in names:
            if name == "extractive":
                apps[name] = ws.app_for("extractive")
            elif name == "adversary":
                server = stack.enter_context(adversary.adversary_server())
                gen = openai_generator(
                    ws, server.base_url, adversary.MODEL_NAME, max_tokens=512, timeout_s=30.0
                )
                # Keyed by the server's address: an app bound to a stopped server is never reused.
                apps[name] = ws.app_for(f"adversary@{server.base_url}", gen)
            else:
                local = stack.enter_context(local_model.LocalModelServer())
                gen = openai_generator(
                    ws,
                    local.base_url,
                    local_model.MODEL_NAME,
                    max_tokens=LOCAL_MODEL_MAX_TOKENS,
                    timeout_s=300.0,
                )
                apps[name] = ws.app_for(f"smollm2@{local.base_url}", gen)
        yield apps
