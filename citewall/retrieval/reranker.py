"""The cross-encoder reranker, and loading it honestly where no trained model is available.

The design's default is ``cross-encoder/ms-marco-MiniLM-L-6-v2``. No PyPI package ships a
trained cross-encoder, so on an offline machine it loads only from the local Hugging Face
cache or a local path (``CITEWALL_RERANKER_MODEL``). When it cannot be loaded the server
still starts and retrieval runs ``rrf_only``; ``load_reranker`` says why and how to fix it.

With ``CITEWALL_MODEL_RUNTIME=onnx`` (the default) a loadable cross-encoder runs from its
cached ONNX export; its status line says which runtime and precision really run.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from citewall.config import DEFAULT_RERANKER, ModelRuntime, RerankerPrecision
from citewall.retrieval.onnx_export import (
    export_cross_encoder,
    fallback_reason,
    local_model_dir,
)
from citewall.retrieval.onnx_models import (
    RERANK_BATCH,
    OnnxCrossEncoder,
    length_sorted_batches,
    load_onnx_model,
)

log = logging.getLogger(__name__)

#: How to turn the full path on, repeated in every "not loaded" status line.
ENABLE_HINT = (
    "set CITEWALL_RERANKER_MODEL=/path/to/cross-encoder (a local sentence-transformers "
    "CrossEncoder directory) to enable the full path"
)


@dataclass(frozen=True, slots=True)
class RerankSettings:
    """What loading the cross-encoder reads (``load_reranker``). Built from ``Settings``
    (``CITEWALL_RERANKER_*``, ``CITEWALL_MODEL_RUNTIME``, ``CITEWALL_TORCH_THREADS``) by
    ``retrieval.factory.rerank_settings``; the defaults are the settings'. How many passages
    are reranked, and in what time, is the retriever's (``FusionSettings``)."""

    #: Where ONNX exports are cached (``Settings.onnx_dir``).
    onnx_dir: Path
    enabled: bool = True
    #: A model name (local cache or hub) or a local path.
    model: str = DEFAULT_RERANKER
    max_length: int = 256
    runtime: ModelRuntime = "onnx"
    precision: RerankerPrecision = "fp32"
    #: Intra-op threads per model call (None: the runtime chooses).
    torch_threads: int | None = 1


class CrossEncoderReranker:
    """Scores (question, passage) pairs with a sentence-transformers ``CrossEncoder``.

    Returns RAW logits (``activation_fn=Identity``): the 0-100 normalisation happens once,
    in ``citewall.citations``. ``precision="bf16"`` runs the forward pass under CPU bfloat16
    autocast (faster on CPUs with native bf16, slower on those without); logits come back as
    float32 either way.
    """

    runtime = "torch"

    def __init__(
        self,
        model: Any,
        *,
        name: str,
        precision: RerankerPrecision = "fp32",
        batch_size: int = RERANK_BATCH,
        warm_up: bool = True,
    ):
        self._model = model
        self.name = name
        self.precision = precision
        self.batch_size = batch_size
        if warm_up:
            # torch's first forward pass is several times slower (allocations, kernel
            # selection); pay it at load so the first request is not "over budget".
            self.score("warm up", ["a short passage to warm up the cross-encoder"] * 2)

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """One raw logit per passage, in the order given."""
        if not passages:
            return []
        # Deferred: torch takes seconds to import; only processes that rerank pay for it.
        import torch

        pairs = [(query, p) for p in passages]
        lengths = [
            len(ids)
            for ids in self._model.tokenizer(
                [query] * len(passages),
                list(passages),
                truncation=True,
                max_length=self._model.max_seq_length,
            )["input_ids"]
        ]
        logits = np.zeros(len(passages), dtype=np.float32)
        bf16 = self.precision == "bf16"
        with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            for batch in length_sorted_batches(lengths, self.batch_size):
                out = self._model.predict(
                    [pairs[i] for i in batch],
                    batch_size=len(batch),
                    activation_fn=torch.nn.Identity(),
                    convert_to_numpy=True,
                    show_progress_bar=False,
                )
                logits[batch] = np.asarray(out, dtype=np.float32).reshape(-1)
        return [float(x) for x in logits]


def build_cross_encoder(name_or_path: str, *, max_length: int, local_only: bool) -> Any:
    """Load a ``CrossEncoder`` on CPU with raw-logit output (raises on failure).

    Loading is seeded (without touching the caller's random state): a checkpoint that lacks a
    trained classification head gets the same initialised head in every process, so rankings
    do not change from one start to the next.
    """
    # Deferred: torch and sentence-transformers take seconds to import; only processes that
    # load a cross-encoder pay for them.
    import torch
    from sentence_transformers import CrossEncoder

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        return CrossEncoder(
            name_or_path,
            device="cpu",
            max_length=max_length,
            local_files_only=local_only,
            activation_fn=torch.nn.Identity(),
        )


def _hub_reachable(timeout_s: float = 1.5) -> bool:
    """A quick HEAD to the hub; offline mode or no route answers False fast."""
    # Deferred: huggingface_hub reads HF_HUB_OFFLINE once, when first imported; the embedder
    # sets it for the packaged model before that.
    from huggingface_hub import constants

    if constants.HF_HUB_OFFLINE:
        return False
    try:
        httpx.head(constants.ENDPOINT, timeout=timeout_s)
    except httpx.HTTPError:
        return False
    return True


def load_reranker(
    rerank: RerankSettings,
) -> tuple[CrossEncoderReranker | OnnxCrossEncoder | None, str]:
    """Load the configured cross-encoder, or return ``(None, why)`` without waiting long.

    Order: disabled by setting -> its cached ONNX export (``model_runtime=onnx``, a local
    model only) -> a local path -> the local HF cache (``local_files_only``) -> a download,
    tried only when a hub answers within ~1.5 s. Never raises.
    """
    if not rerank.enabled:
        return None, "disabled (CITEWALL_RERANKER_ENABLED=false): retrieval runs rrf_only"
    name = rerank.model
    onnx_problem = ""
    if rerank.runtime == "onnx":
        try:
            onnx = _onnx_reranker(name, rerank)
            return onnx, _loaded(name, rerank, onnx.runtime, onnx.precision)
        except Exception as exc:  # any failure: torch runs, and the status line says why
            onnx_problem = fallback_reason(exc)
    if rerank.torch_threads:
        # Deferred: torch takes seconds to import (see build_cross_encoder).
        import torch

        torch.set_num_threads(rerank.torch_threads)
    is_path = Path(name).expanduser().exists()
    try:
        model = build_cross_encoder(
            str(Path(name).expanduser()) if is_path else name,
            max_length=rerank.max_length,
            local_only=True,
        )
    except Exception as local_exc:
        if is_path:
            return None, (
                f"not loaded: {name!r} is not a loadable CrossEncoder "
                f"({type(local_exc).__name__}: {local_exc}); retrieval runs rrf_only; {ENABLE_HINT}"
            )
        if not _hub_reachable():
            return None, (
                f"not loaded: {name!r} is not in the local model cache and no model hub is "
                f"reachable; retrieval runs rrf_only; {ENABLE_HINT}"
            )
        try:
            model = build_cross_encoder(name, max_length=rerank.max_length, local_only=False)
        except Exception as exc:
            return None, (
                f"not loaded: downloading {name!r} failed ({type(exc).__name__}: {exc}); "
                f"retrieval runs rrf_only; {ENABLE_HINT}"
            )
    if onnx_problem:
        log.warning("cross-encoder %r runs on torch: ONNX unavailable: %s", name, onnx_problem)
    precision = rerank.precision
    if precision == "int8":
        log.warning("cross-encoder %r: int8 runs on the onnx runtime only; torch runs fp32", name)
        precision = "fp32"
    reranker = CrossEncoderReranker(model, name=name, precision=precision)
    status = _loaded(name, rerank, reranker.runtime, precision)
    return reranker, status + (f"; onnx unavailable: {onnx_problem}" if onnx_problem else "")


def _onnx_reranker(name: str, rerank: RerankSettings) -> OnnxCrossEncoder:
    """The cross-encoder from its cached export (exported from the seeded torch model when
    missing); raises (``OnnxUnavailable`` with the reason, mostly) when it cannot run."""
    model_dir = local_model_dir(name)

    def export(folder: Path) -> None:
        if rerank.torch_threads:
            # Deferred: torch takes seconds to import; only an export needs it here.
            import torch

            torch.set_num_threads(rerank.torch_threads)
        ce = build_cross_encoder(str(model_dir), max_length=rerank.max_length, local_only=True)
        export_cross_encoder(ce, folder)

    model = load_onnx_model(
        model_dir,
        "cross-encoder",
        cache_root=rerank.onnx_dir,
        export=export,
        threads=rerank.torch_threads,
        max_length=rerank.max_length,
    )
    precision = rerank.precision
    if precision == "bf16":
        log.warning(
            "cross-encoder %r: bf16 is not supported on the onnx runtime (torch autocast only); "
            "onnx runs fp32",
            name,
        )
        precision = "fp32"
    elif precision == "int8":
        try:
            model = model.quantized()
        except Exception as exc:
            log.warning(
                "cross-encoder %r: int8 unavailable (%s: %s); onnx runs fp32",
                name,
                type(exc).__name__,
                exc,
            )
            precision = "fp32"
    return OnnxCrossEncoder(model, name=name, precision=precision)


def _loaded(name: str, rerank: RerankSettings, runtime: str, precision: str) -> str:
    return (
        f"loaded {name!r} (max_length {rerank.max_length}, runtime {runtime}, "
        f"precision {precision})"
    )
