"""The abstention calibration reaches every replica through the database, like the lexical
index: two replicas with empty data dirs apply the same one, and both move to a new one."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy.orm import Session, sessionmaker

from citewall.retrieval.answerability import Thresholds, Vocabulary
from citewall.retrieval.calibrated import CalibratedDecider, load_calibration, save_calibration
from citewall.retrieval.calibration import Calibration
from citewall.retrieval.factory import live_artifact
from citewall.retrieval.shared_artifacts import push
from citewall.storage.artifacts import DatabaseArtifactStore


def calibration(min_dense: float, kb_version: str) -> Calibration:
    return Calibration(
        thresholds=Thresholds(min_dense, 0.0, 0.0),
        vocabulary=Vocabulary(frozenset({"ship"})),
        fitted_at="2026-12-02T03:00:00+00:00",
        kb_version=kb_version,
        kb_cards=4,
        sampled_cards=4,
        probes={"answerable": 8, "near_miss": 4, "off_domain": 101},
        answered_rate=1.0,
        refusal_rate=0.9,
    )


def replica(store: DatabaseArtifactStore, directory: Path) -> CalibratedDecider:
    live = live_artifact("calibration", directory, load_calibration, store, probe_interval_s=0.0)
    return CalibratedDecider(live, default=Thresholds(0.43, 0.0))


def test_replicas_apply_the_calibration_the_ingest_pushed(
    sessions: sessionmaker[Session], tmp_path: Path
) -> None:
    store = DatabaseArtifactStore(sessions)
    ingest = tmp_path / "ingest"
    save_calibration(ingest, calibration(0.31, "v-1-aaaaaa"))
    push(store, "calibration", ingest)
    first, second = replica(store, tmp_path / "r1"), replica(store, tmp_path / "r2")
    for decider in (first, second):
        now = decider.in_use()
        assert now.source == "calibrated" and now.thresholds.min_dense == 0.31

    save_calibration(ingest, calibration(0.37, "v-2-bbbbbb"))
    push(store, "calibration", ingest)
    for decider in (first, second):
        assert decider.in_use().thresholds.min_dense == 0.37


def test_a_replica_with_nothing_stored_applies_the_defaults(
    sessions: sessionmaker[Session], tmp_path: Path
) -> None:
    decider = replica(DatabaseArtifactStore(sessions), tmp_path / "r1")
    assert decider.in_use().source == "default"
    assert decider.status()["error"]  # and says why
