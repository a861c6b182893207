"""The embedder and the cross-encoder on onnxruntime, tokenised by ``tokenizers``.

Same contracts as the torch classes (``SentenceTransformerEmbedder``, ``CrossEncoderReranker``):
unit-normalised float32 embeddings, raw logits in the order given. Inputs are tokenised once,
sorted by length and run in batches padded only to their own longest member, so a short text
never pays for a long one. Loading a cached export imports neither torch nor
sentence-transformers; ``load_onnx_model`` exports (with torch) only when the cache lacks it.
"""

from __future__ import annotations

import importlib.util
import logging
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt
from tokenizers import Encoding, Tokenizer

from citewall.retrieval.onnx_export import (
    INPUT_NAMES,
    INT8_PER_CHANNEL,
    INT8_REDUCE_RANGE,
    MODEL_FILE,
    Manifest,
    ModelKind,
    OnnxUnavailable,
    cache_folder,
    publish,
    quantize_int8,
)
from citewall.retrieval.records import Vector

if TYPE_CHECKING:
    from onnxruntime import InferenceSession

log = logging.getLogger(__name__)

#: Pairs per forward pass; pairs are sorted by token length first, so a batch pads only to
#: its own longest pair. `citewall bench models` (top 20, 256 tokens, rerank p50 ms, torch /
#: onnx): batch 4 1215 / 1079, 8 1258 / 1072, 16 1254 / 1323, 32 2013 / 2108; an earlier run
#: had 4 fastest on both. Bigger batches pad more and lose.
RERANK_BATCH = 4


def length_sorted_batches(lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """Indices of ``lengths`` sorted by length (stable), cut into batches of ``batch_size``:
    each batch pads only to its own longest member.

    >>> length_sorted_batches([5, 1, 3, 2], 2)
    [[1, 3], [2, 0]]
    """
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    return [order[i : i + batch_size] for i in range(0, len(order), batch_size)]


def open_session(path: Path, threads: int | None) -> InferenceSession:
    """A CPU session on ``path``: ``threads`` intra-op threads (None: onnxruntime decides), one
    inter-op thread, every graph optimisation."""
    # Deferred: an optional part (``load_onnx_model`` checks it is there); without it the
    # models run on torch.
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads or 0
    options.inter_op_num_threads = 1
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    return onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def load_tokenizer(model_dir: Path, max_length: int) -> tuple[Tokenizer, int]:
    """The model dir's ``tokenizer.json`` truncating to ``max_length`` without padding, and
    its pad id (padding happens per batch)."""
    path = model_dir / "tokenizer.json"
    if not path.is_file():
        raise OnnxUnavailable(f"no tokenizer.json in {model_dir}")
    tokenizer = Tokenizer.from_file(str(path))
    padding = tokenizer.padding
    pad_id = int(padding["pad_id"]) if padding else tokenizer.token_to_id("[PAD]") or 0
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length)
    return tokenizer, pad_id


@dataclass(frozen=True, slots=True)
class OnnxModel:
    """An exported model's session, its tokenizer and manifest."""

    session: InferenceSession
    tokenizer: Tokenizer
    pad_id: int
    manifest: Manifest
    folder: Path
    threads: int | None

    def run(self, encodings: Sequence[Encoding]) -> npt.NDArray[np.float32]:
        """The graph's output for one batch, padded to its longest member."""
        width = max(len(e.ids) for e in encodings)
        arrays = {name: np.zeros((len(encodings), width), dtype=np.int64) for name in INPUT_NAMES}
        arrays["input_ids"].fill(self.pad_id)
        for row, enc in enumerate(encodings):
            n = len(enc.ids)
            arrays["input_ids"][row, :n] = enc.ids
            arrays["attention_mask"][row, :n] = enc.attention_mask
            arrays["token_type_ids"][row, :n] = enc.type_ids
        # The exporter drops inputs a graph does not use; feed what the session asks for.
        feeds = {i.name: arrays[i.name] for i in self.session.get_inputs()}
        return np.asarray(self.session.run(None, feeds)[0], dtype=np.float32)

    def quantized(
        self, *, per_channel: bool = INT8_PER_CHANNEL, reduce_range: bool = INT8_REDUCE_RANGE
    ) -> OnnxModel:
        """The same model with int8 weights (quantised once, cached beside the fp32 export);
        an unreadable cached int8 file is quantised again."""
        options = {"per_channel": per_channel, "reduce_range": reduce_range}
        path = quantize_int8(self.folder, **options)
        try:
            session = open_session(path, self.threads)
        except Exception:
            path.unlink(missing_ok=True)
            session = open_session(quantize_int8(self.folder, **options), self.threads)
        return replace(self, session=session)


def load_onnx_model(
    model_dir: Path,
    kind: ModelKind,
    *,
    cache_root: Path,
    export: Callable[[Path], None],
    threads: int | None,
    max_length: int | None = None,
) -> OnnxModel:
    """The cached export of ``model_dir``, made first with ``export`` (which writes the graph
    and manifest into the folder it is given) when missing or unusable.

    ``max_length`` overrides the export's truncation length. Raises ``OnnxUnavailable`` with
    the reason when no ONNX model can run.
    """
    if importlib.util.find_spec("onnxruntime") is None:
        raise OnnxUnavailable("onnxruntime is not installed")
    if not (model_dir / "tokenizer.json").is_file():
        raise OnnxUnavailable(f"no tokenizer.json in {model_dir}")
    folder = cache_folder(cache_root, model_dir, kind)
    if folder.exists():
        try:
            return _open(model_dir, folder, kind, threads, max_length)
        except Exception as exc:
            log.warning("ONNX cache %s is unusable (%s): exporting again", folder, exc)
            shutil.rmtree(folder, ignore_errors=True)
    try:
        publish(folder, export)
    except Exception as exc:
        raise OnnxUnavailable(f"export failed ({type(exc).__name__}: {exc})") from exc
    try:
        return _open(model_dir, folder, kind, threads, max_length)
    except OnnxUnavailable:
        raise
    except Exception as exc:
        problem = f"{type(exc).__name__}: {exc}"
        raise OnnxUnavailable(f"a fresh export does not load ({problem})") from exc


def _open(
    model_dir: Path, folder: Path, kind: ModelKind, threads: int | None, max_length: int | None
) -> OnnxModel:
    manifest = Manifest.read(folder, kind)
    tokenizer, pad_id = load_tokenizer(model_dir, max_length or manifest.max_length)
    return OnnxModel(
        session=open_session(folder / MODEL_FILE, threads),
        tokenizer=tokenizer,
        pad_id=pad_id,
        manifest=manifest,
        folder=folder,
        threads=threads,
    )


class OnnxEmbedder:
    """Normalised float32 embeddings from an exported sentence-transformers pipeline."""

    runtime = "onnx"

    def __init__(self, model: OnnxModel, *, name: str, batch_size: int = 16) -> None:
        self._model = model
        self.name = name
        self.batch_size = batch_size
        self.dimension: int = model.manifest.dimension

    def embed_query(self, text: str) -> Vector:
        """One question -> one unit vector of ``dimension`` float32."""
        vector: Vector = self.embed_documents([text])[0]
        return vector

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Many passages -> a (len(texts), dimension) float32 array of unit vectors."""
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        lower = self._model.manifest.lower_case
        encodings = self._model.tokenizer.encode_batch([t.lower() if lower else t for t in texts])
        for batch in length_sorted_batches([len(e.ids) for e in encodings], self.batch_size):
            out[batch] = self._model.run([encodings[i] for i in batch])
        # As sentence-transformers' normalize_embeddings (eps 1e-12).
        norms = np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
        return np.ascontiguousarray(out / norms, dtype=np.float32)


class OnnxCrossEncoder:
    """Raw logits for (question, passage) pairs from an exported seeded ``CrossEncoder``."""

    runtime = "onnx"

    def __init__(
        self,
        model: OnnxModel,
        *,
        name: str,
        precision: str = "fp32",
        batch_size: int = RERANK_BATCH,
        warm_up: bool = True,
    ) -> None:
        #: The session and tokenizer (the benchmark builds variants of it).
        self.model = model
        self.name = name
        self.precision = precision
        self.batch_size = batch_size
        if warm_up:
            # The first run allocates and picks kernels; pay it at load, not on a request.
            self.score("warm up", ["a short passage to warm up the cross-encoder"] * 2)

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """One raw logit per passage, in the order given."""
        if not passages:
            return []
        encodings = self.model.tokenizer.encode_batch([(query, p) for p in passages])
        logits = np.zeros(len(passages), dtype=np.float32)
        for batch in length_sorted_batches([len(e.ids) for e in encodings], self.batch_size):
            logits[batch] = self.model.run([encodings[i] for i in batch]).reshape(-1)
        return [float(x) for x in logits]
