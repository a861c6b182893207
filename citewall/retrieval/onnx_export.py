"""Exporting the embedder and the cross-encoder to ONNX once, into a cache keyed by content.

An export takes seconds and needs torch; loading a cached one needs neither, so a server
start that finds its export skips importing torch and sentence-transformers (~4 s). The cache
folder's name is a hash of the model directory (file names and sizes, the content of the
weights and configs) and of ``EXPORT_FORMAT``: new weights or a new export recipe get a new
folder, never a stale graph. Folders appear whole (built in a temp folder, then
``os.replace``), so a crash mid-export leaves no half-written cache behind.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from citewall.errors import CitewallError

if TYPE_CHECKING:
    import torch

ModelKind = Literal["embedder", "cross-encoder"]

#: Bump when the exported graph changes (inputs, outputs, opset, quantisation), so old caches
#: are not reused.
EXPORT_FORMAT = 1
OPSET = 17
MODEL_FILE = "model.onnx"
INT8_FILE = "model.int8.onnx"
MANIFEST_FILE = "manifest.json"
INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")
#: Whose content goes into the key, beside every file's name and size.
_HASHED_SUFFIXES = {".safetensors", ".bin", ".json", ".txt", ".model"}
#: int8 dynamic quantisation options, the best of the four by rank agreement with fp32
#: (`citewall bench models`: per-channel 0.967 mean Spearman, per-tensor 0.928; reduce_range
#: no better with per-channel, 0.766 without it).
INT8_PER_CHANNEL = True
INT8_REDUCE_RANGE = False


class OnnxUnavailable(CitewallError):
    """The ONNX path cannot run for this model; the message says why (torch runs instead)."""


def fallback_reason(exc: Exception) -> str:
    """Why the ONNX path did not run, for the one warning and the status line."""
    return str(exc) if isinstance(exc, OnnxUnavailable) else f"{type(exc).__name__}: {exc}"


@dataclass(frozen=True, slots=True)
class Manifest:
    """What a loader needs to know about an export besides the graph."""

    kind: ModelKind
    #: Embedding width (embedder) or 1 (cross-encoder: one logit per pair).
    dimension: int
    #: Truncation length the torch model uses (the embedder's ``max_seq_length``).
    max_length: int
    #: sentence-transformers lower-cases before tokenising when the model says so.
    lower_case: bool = False
    format: int = EXPORT_FORMAT

    def write(self, folder: Path) -> None:
        data = {
            "kind": self.kind,
            "dimension": self.dimension,
            "max_length": self.max_length,
            "lower_case": self.lower_case,
            "format": self.format,
        }
        (folder / MANIFEST_FILE).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")

    @classmethod
    def read(cls, folder: Path, kind: ModelKind) -> Manifest:
        """The manifest of ``folder``; ``OnnxUnavailable`` if it is missing, corrupt or stale."""
        try:
            data = json.loads((folder / MANIFEST_FILE).read_text(encoding="utf-8"))
            manifest = cls(
                kind=data["kind"],
                dimension=int(data["dimension"]),
                max_length=int(data["max_length"]),
                lower_case=bool(data["lower_case"]),
                format=int(data["format"]),
            )
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise OnnxUnavailable(f"unreadable {MANIFEST_FILE}: {type(exc).__name__}") from exc
        if manifest.kind != kind or manifest.format != EXPORT_FORMAT:
            raise OnnxUnavailable(f"{MANIFEST_FILE} is for {manifest.kind} v{manifest.format}")
        return manifest


def local_model_dir(name: str) -> Path:
    """The local directory holding model ``name`` (a path, or a name in the local Hugging Face
    cache); ``OnnxUnavailable`` when there is none (the torch loader may still download it)."""
    path = Path(name).expanduser()
    if path.is_dir():
        return path.resolve()
    # Deferred: huggingface_hub reads HF_HUB_OFFLINE once, at import; the embedder sets it for
    # the packaged model before any model is loaded.
    from huggingface_hub import snapshot_download

    try:
        return Path(snapshot_download(name, local_files_only=True))
    except Exception as exc:
        raise OnnxUnavailable(f"{name!r} is not a local model directory") from exc


def cache_key(model_dir: Path, kind: ModelKind) -> str:
    """A hash of the model directory's files and of the export format (hex, 24 characters)."""
    digest = hashlib.sha256(f"{kind}\0format {EXPORT_FORMAT}\0opset {OPSET}\0".encode())
    files = sorted(
        p
        for p in model_dir.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(model_dir).parts)
    )
    for path in files:
        rel = path.relative_to(model_dir).as_posix()
        digest.update(f"{rel}\0{path.stat().st_size}\0".encode())
        if path.suffix in _HASHED_SUFFIXES:
            with path.open("rb") as fh:
                digest.update(hashlib.file_digest(fh, "blake2b").digest())
    return digest.hexdigest()[:24]


def cache_folder(root: Path, model_dir: Path, kind: ModelKind) -> Path:
    """Where the export of ``model_dir`` as ``kind`` lives under ``root``."""
    return root / f"{kind}-{cache_key(model_dir, kind)}"


def publish(folder: Path, fill: Callable[[Path], None]) -> None:
    """Create ``folder`` whole: ``fill`` writes into a temp folder beside it, which is then
    renamed. If another process published it first, its copy is kept."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    try:
        tmp.chmod(0o755)  # mkdtemp makes it 0700: private to whoever exported first
        fill(tmp)
        try:
            os.replace(tmp, folder)
        except OSError:
            if not (folder / MANIFEST_FILE).exists():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _export(module: torch.nn.Module, dest: Path, output: str) -> None:
    """Trace ``module(input_ids, attention_mask, token_type_ids)`` into ``dest`` (TorchScript
    exporter; dynamic batch and sequence axes)."""
    # Deferred: torch and transformers take seconds to import; only a process that exports
    # pays for them.
    import torch
    from transformers import PreTrainedModel

    for part in module.modules():
        if isinstance(part, PreTrainedModel):
            # Traced eager attention is ~8% faster on onnxruntime than traced SDPA (20 pairs,
            # 256 tokens, one thread); same logits to 1e-7.
            part.set_attn_implementation("eager")
    sample = torch.ones((2, 8), dtype=torch.long)
    axes = {name: {0: "batch", 1: "sequence"} for name in INPUT_NAMES}
    # The tracer warns about Python branches on shapes in the model code; the parity tests check
    # the exported graph against torch, so a first start need not print pages of them.
    with torch.inference_mode(False), torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            module.eval(),
            (sample, torch.ones_like(sample), torch.zeros_like(sample)),
            str(dest),
            dynamo=False,
            opset_version=OPSET,
            input_names=list(INPUT_NAMES),
            output_names=[output],
            dynamic_axes={**axes, output: {0: "batch"}},
        )


def export_embedder(model: torch.nn.Module, folder: Path) -> None:
    """Write a ``SentenceTransformer``'s whole pipeline (transformer, its pooling as
    configured, any dense or normalise module) as ``MODEL_FILE`` plus its manifest."""
    # Deferred: as in ``_export``.
    import torch

    class SentenceEmbedding(torch.nn.Module):
        def __init__(self, st: torch.nn.Module) -> None:
            super().__init__()
            self.st = st

        def forward(
            self, input_ids: torch.Tensor, attention_mask: torch.Tensor, types: torch.Tensor
        ) -> torch.Tensor:
            features = {
                "input_ids": input_ids,
                "attention_mask": attention_mask,
                "token_type_ids": types,
            }
            out: torch.Tensor = self.st(features)["sentence_embedding"]
            return out

    _export(SentenceEmbedding(model), folder / MODEL_FILE, "embedding")
    getter = getattr(model, "get_embedding_dimension", None)
    dimension = getter() if getter else model.get_sentence_embedding_dimension()  # type: ignore[operator]
    first = model[0]  # type: ignore[index]
    Manifest(
        kind="embedder",
        dimension=int(dimension),
        max_length=int(model.max_seq_length),  # type: ignore[arg-type]
        lower_case=bool(getattr(first, "do_lower_case", False)),
    ).write(folder)


def export_cross_encoder(model: torch.nn.Module, folder: Path) -> None:
    """Write a seeded ``CrossEncoder``'s sequence classifier (raw logits) as ``MODEL_FILE``."""
    # Deferred: as in ``_export``.
    import torch

    class PairLogits(torch.nn.Module):
        def __init__(self, classifier: torch.nn.Module) -> None:
            super().__init__()
            self.classifier = classifier

        def forward(
            self, input_ids: torch.Tensor, attention_mask: torch.Tensor, types: torch.Tensor
        ) -> torch.Tensor:
            out = self.classifier(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=types
            )
            logits: torch.Tensor = out.logits
            return logits

    _export(PairLogits(model.model), folder / MODEL_FILE, "logits")  # type: ignore[arg-type]
    Manifest(
        kind="cross-encoder",
        dimension=1,
        max_length=int(model.max_seq_length),  # type: ignore[arg-type]
    ).write(folder)


def int8_file(
    *, per_channel: bool = INT8_PER_CHANNEL, reduce_range: bool = INT8_REDUCE_RANGE
) -> str:
    """The int8 file name for these quantisation options (the defaults: ``INT8_FILE``)."""
    if (per_channel, reduce_range) == (INT8_PER_CHANNEL, INT8_REDUCE_RANGE):
        return INT8_FILE
    return f"model.int8-pc{int(per_channel)}-rr{int(reduce_range)}.onnx"


def quantize_int8(
    folder: Path, *, per_channel: bool = INT8_PER_CHANNEL, reduce_range: bool = INT8_REDUCE_RANGE
) -> Path:
    """An int8 copy of the fp32 export beside it (dynamic quantisation of the weights, made
    once, written atomically); its path. ``OnnxUnavailable`` when the quantiser is missing."""
    dest = folder / int8_file(per_channel=per_channel, reduce_range=reduce_range)
    if dest.exists():
        return dest
    try:
        # Deferred: the quantiser imports the onnx package; only int8 needs it.
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as exc:
        raise OnnxUnavailable(f"int8 quantisation needs the onnx package ({exc})") from exc
    tmp = folder / f".{os.getpid()}-{dest.name}"
    try:
        quantize_dynamic(
            folder / MODEL_FILE,
            tmp,
            per_channel=per_channel,
            reduce_range=reduce_range,
            weight_type=QuantType.QInt8,
        )
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)
    return dest
