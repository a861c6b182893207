"""Abstention with the KB's calibration vs the fixed thresholds, per labelled KB.

Ingests one labelled KB into a throwaway data dir (the ingest fits its calibration), asks the
split's answerable questions and unanswerable ones through the production retriever, and
reports, for each decision, the answered rate on answerable questions and the ``not_found``
recall on unanswerable ones (near misses and uncovered topics apart). The decisions compared:

- ``fixed``: the settings' thresholds (min dense 0.43, tuned by hand on the demo's dev split);
- ``calibrated``: the thresholds fitted on the KB's own probes at ingest;
- ``off`` (negative control): no abstention, which must refuse nothing.

This measures the answerability decision on the retrieved context (the step that says
"not found" before generating); ``citewall eval`` measures the whole answer on the demo.
Tune only on ``--split dev``; report ``--split test``. From the repository root:

    HF_HUB_OFFLINE=1 python benchmarks/abstention.py --kb demo --split test
    HF_HUB_OFFLINE=1 python benchmarks/abstention.py --kb zulip --split test
    HF_HUB_OFFLINE=1 python benchmarks/abstention.py --kb fastapi --split test

``--timing`` measures instead what calibration costs an ingest of the KB: a fresh ingest with
``CITEWALL_CALIBRATION=false``, the same with calibration, then a re-ingest of the calibrated
KB after one card changed (its probes reuse the stored probe vectors).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from citewall.config import Settings
from citewall.ingest.calibrate import calibrate
from citewall.ingest.pipeline import ingest_paths
from citewall.kb.audiences import EVERY_CARD
from citewall.retrieval.answerability import Decider, Signals, Thresholds
from citewall.retrieval.calibration import signal_aucs
from citewall.retrieval.embedder import load_embedder
from citewall.retrieval.factory import build_decider, build_retriever, open_vector_index
from citewall.retrieval.protocols import Embedder
from citewall.storage import db, schema
from citewall_evals.data import DEMO_CARDS, HOSTILE_CARDS, QUESTIONS_DIR, REPO_ROOT
from citewall_evals.workspace import workspace_settings

#: KB name -> (its card files, the folder of its labelled questions).
SETS = {
    "demo": ((DEMO_CARDS, HOSTILE_CARDS), QUESTIONS_DIR),
    "zulip": ((REPO_ROOT / "evals" / "zulip-help.jsonl",), QUESTIONS_DIR / "zulip"),
    "fastapi": ((REPO_ROOT / "evals" / "fastapi-docs.jsonl",), QUESTIONS_DIR / "fastapi"),
}


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _rates(
    decide: Decider | None, answerable: list[Signals], unanswerable: list[tuple[str, Signals]]
) -> dict[str, Any]:
    def ok(s: Signals) -> bool:
        return decide is None or decide.answerable(s)

    kinds = sorted({k for k, _ in unanswerable})
    return {
        "answered_rate": round(sum(ok(s) for s in answerable) / len(answerable), 3),
        "not_found_recall": round(sum(not ok(s) for _, s in unanswerable) / len(unanswerable), 3),
        "by_kind": {
            k: round(
                sum(not ok(s) for kk, s in unanswerable if kk == k)
                / sum(kk == k for kk, _ in unanswerable),
                3,
            )
            for k in kinds
        },
    }


def _ingest(paths: list[Path], settings: Settings, embedder: Embedder) -> tuple[float, str]:
    engine = db.make_engine(settings.sqlalchemy_url)
    schema.migrate(engine)
    t0 = time.perf_counter()
    report = ingest_paths(
        paths,
        settings,
        embedder=embedder,
        session_factory=db.make_session_factory(engine),
        progress=False,
    )
    engine.dispose()
    return time.perf_counter() - t0, report.calibration or "not calibrated"


def timing(kb: str) -> dict[str, Any]:
    """Ingest seconds without and with calibration, and for a re-ingest after one change."""
    cards, _ = SETS[kb]
    out: dict[str, Any] = {"kb": kb}
    with tempfile.TemporaryDirectory(prefix="cw-abstention-timing-") as tmp:
        root = Path(tmp)
        embedder = load_embedder(workspace_settings(root / "warm"))
        embedder.embed_documents(["warm up the model"])
        for name, on in (("ingest_without_calibration", False), ("ingest_with_calibration", True)):
            settings = workspace_settings(root / name, calibration=on)
            seconds, calibrated = _ingest(list(cards), settings, embedder)
            out[name] = {"seconds": round(seconds, 2), "calibration": calibrated}
        # One card changed: its chunks, the lexical index and the calibration are redone.
        lines = cards[0].read_text(encoding="utf-8").splitlines()
        first = json.loads(lines[0])
        first["body"] = f"{first['body']} This card was edited."
        edited = root / cards[0].name
        edited.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n", encoding="utf-8")
        seconds, calibrated = _ingest([edited, *cards[1:]], settings, embedder)
        out["reingest_one_card_changed"] = {"seconds": round(seconds, 2), "calibration": calibrated}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kb", choices=sorted(SETS), default="demo")
    parser.add_argument("--split", choices=("dev", "test"), default="dev")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument(
        "--timing", action="store_true", help="measure what calibration costs an ingest"
    )
    parser.add_argument(
        "--data-dir",
        type=Path,
        help="keep the ingested KB here between runs (the calibration is refitted every run)",
    )
    args = parser.parse_args()
    if args.timing:
        print(json.dumps(timing(args.kb), indent=1))
        return
    cards, questions_dir = SETS[args.kb]
    with tempfile.TemporaryDirectory(prefix="cw-abstention-") as tmp:
        settings = workspace_settings(args.data_dir or Path(tmp))
        embedder = load_embedder(settings)
        engine = db.make_engine(settings.sqlalchemy_url)
        schema.migrate(engine)
        t0 = time.perf_counter()
        report = ingest_paths(
            list(cards),
            settings,
            embedder=embedder,
            session_factory=db.make_session_factory(engine),
            progress=False,
        )
        engine.dispose()
        index = open_vector_index(settings)
        calibrate(settings, embedder, *index.all_chunks(with_embeddings=True))  # refit on this code
        ingest_s = time.perf_counter() - t0
        retriever = build_retriever(settings, embedder=embedder, reranker=None)
        calibrated = build_decider(settings)
        assert calibrated is not None
        fixed = Thresholds(settings.abstain_min_dense, settings.abstain_min_coverage)
        answerable_q = [
            q["question"]
            for q in _rows(questions_dir / f"questions.{args.split}.jsonl")
            if q.get("gold")
        ]
        unanswerable_q = _rows(questions_dir / f"unanswerable.{args.split}.jsonl")
        contexts = [retriever.retrieve(q, cards=EVERY_CARD) for q in answerable_q]
        u_contexts = [retriever.retrieve(u["question"], cards=EVERY_CARD) for u in unanswerable_q]
        out: dict[str, Any] = {"kb": args.kb, "split": args.split, "ingest_s": round(ingest_s, 1)}
        for name, decide in (("fixed", fixed), ("calibrated", calibrated), ("off", None)):
            judge = decide if decide is not None else fixed
            a = [judge.measure(q, c) for q, c in zip(answerable_q, contexts, strict=True)]
            u = [
                (row["kind"], judge.measure(row["question"], c))
                for row, c in zip(unanswerable_q, u_contexts, strict=True)
            ]
            out[name] = _rates(decide, a, u)
            if name == "calibrated":
                out["signal_auc"] = signal_aucs(a, [s for _, s in u])
        out["calibration"] = calibrated.status()["calibration"]
        out["ingest"] = report.summary()
    if args.json:
        print(json.dumps(out, indent=1))
        return
    cal = out["calibration"] or {}
    n_a, n_u = len(answerable_q), len(unanswerable_q)
    print(f"{args.kb} {args.split}: {n_a} answerable, {n_u} unanswerable")
    print(f"calibration: {cal.get('thresholds')} probes {cal.get('probes')}")
    print(f"  guard: {cal.get('guard')}")
    print(
        f"  on its probes: answered {cal.get('answered_rate')}, "
        f"refused {cal.get('refusal_rate')} {cal.get('refusal_by_kind')}"
    )
    print(f"signal AUC on the split: {out['signal_auc']}")
    for name in ("fixed", "calibrated", "off"):
        r = out[name]
        print(
            f"  {name:<10} answered {r['answered_rate']:.3f}  "
            f"not_found recall {r['not_found_recall']:.3f}  {r['by_kind']}"
        )
    print(f"ingest {out['ingest_s']} s: {out['ingest']}")


if __name__ == "__main__":
    main()
