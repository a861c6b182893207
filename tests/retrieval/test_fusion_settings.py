"""The retrieval components' own records: their defaults are the settings' defaults, each
record is built from ``Settings`` by the retrieval factory, and tuning one field needs no
``Settings``."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

from citewall.config import Settings, load_settings
from citewall.retrieval.factory import fusion_settings, rerank_settings
from citewall.retrieval.fusion import rrf
from citewall.retrieval.reranker import RerankSettings
from citewall.retrieval.retriever import FusionSettings

#: A record's field and the setting it is built from, where the names differ.
RERANK_NAMES = {
    "enabled": "reranker_enabled",
    "model": "reranker_model",
    "max_length": "reranker_max_length",
    "runtime": "model_runtime",
    "precision": "reranker_precision",
}


def _default(name: str) -> object:
    return Settings.model_fields[name].default


def test_the_fusion_defaults_are_the_settings_defaults() -> None:
    for f in fields(FusionSettings):
        assert f.default == _default(f.name), f.name


def test_the_rerank_defaults_are_the_settings_defaults() -> None:
    for f in fields(RerankSettings):
        if f.name != "onnx_dir":  # a path under the data dir: no default of its own
            assert f.default == _default(RERANK_NAMES.get(f.name, f.name)), f.name


def test_the_records_are_built_from_the_settings(tmp_path: Path) -> None:
    settings = load_settings(
        data_dir=tmp_path,
        rrf_k=33,
        rrf_bm25_weight=0.5,
        context_k=7,
        reranker_enabled=False,
        reranker_precision="int8",
        torch_threads=3,
    )
    assert fusion_settings(settings) == FusionSettings(rrf_k=33, rrf_bm25_weight=0.5, context_k=7)
    assert rerank_settings(settings) == RerankSettings(
        onnx_dir=settings.onnx_dir, enabled=False, precision="int8", torch_threads=3
    )
    # Negative control: a record that differs in one field is not equal.
    assert fusion_settings(settings) != FusionSettings(rrf_k=33, context_k=7)


def test_tuning_rrf_k_is_a_fusion_settings_alone() -> None:
    tuned = FusionSettings(rrf_k=1)
    dense, bm25 = ["a", "b"], ["b", "a"]
    # With k=1 a first place outweighs a second by far more than with the default k.
    assert rrf([dense, bm25], k=tuned.rrf_k, weights=[1.0, 2.0])[0][0] == "b"
    default = FusionSettings()
    assert default.rrf_k == _default("rrf_k") and tuned.dense_top_k == default.dense_top_k
