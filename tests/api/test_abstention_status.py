"""The abstention decision in use, on /readyz (admins) and /api/v1/admin/abstention: the KB's
calibration fitted at ingest, or the operator's thresholds when they set them."""

from __future__ import annotations

import dataclasses
from dataclasses import replace

import pytest
from fastapi.testclient import TestClient
from pydantic import ValidationError

from citewall.api.abstention_schemas import AbstentionCalibration, AbstentionThresholds
from citewall.api.app import create_app
from citewall.retrieval.answerability import Thresholds
from citewall.retrieval.calibrated import CalibratedDecider
from citewall.retrieval.calibration import Calibration
from citewall.retrieval.factory import build_decider

from .conftest import ApiEnv


def test_readyz_shows_the_calibration_in_use_to_admins_only(env_sqlite: ApiEnv) -> None:
    env = env_sqlite
    checks = env.client.get("/readyz", headers=env.auth("admin")).json()["checks"]
    shown = checks["retrieval"]["answerability"]
    assert shown["source"] == "calibrated" and shown["override"] is False
    calibration = shown["calibration"]
    assert calibration["thresholds"] == shown["thresholds"]
    assert calibration["fitted_at"] and calibration["kb_version"]
    assert calibration["probes"]["off_domain"] >= 90 and calibration["probes"]["answerable"] > 0
    assert 0.9 <= calibration["answered_rate"] <= 1.0
    assert 0.0 <= calibration["refusal_rate"] <= 1.0
    assert "checks" not in env.client.get("/readyz", headers=env.auth("member")).json()


def test_the_admin_page_reads_the_same_decision(env_sqlite: ApiEnv) -> None:
    env = env_sqlite
    r = env.client.get("/api/v1/admin/abstention", headers=env.auth("admin"))
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["source"] == "calibrated"
    assert body["calibration"]["sampled_cards"] == body["calibration"]["kb_cards"] > 0
    assert body["thresholds"] == body["calibration"]["thresholds"]
    assert env.client.get("/api/v1/admin/abstention", headers=env.auth("member")).status_code == 403


def test_an_operator_override_wins_and_says_so(env_sqlite: ApiEnv) -> None:
    env = env_sqlite
    settings = env.runtime.settings.model_copy(update={"abstain_min_dense": 0.5})
    settings.model_fields_set.add("abstain_min_dense")  # as if set in the environment
    decider = build_decider(settings)
    assert isinstance(decider, CalibratedDecider)
    runtime = replace(env.runtime, settings=settings, thresholds=decider)
    with TestClient(create_app(runtime)) as client:
        shown = client.get("/readyz", headers=env.auth("admin")).json()["checks"]["retrieval"]
        body = client.get("/api/v1/admin/abstention", headers=env.auth("admin")).json()
    assert shown["answerability"]["source"] == "override"
    assert shown["answerability"]["override"] is True
    assert shown["answerability"]["thresholds"]["min_dense"] == 0.5
    assert body["source"] == "override" and body["calibration"] is not None


def test_fixed_thresholds_are_shown_as_such(env_sqlite: ApiEnv) -> None:
    env = env_sqlite
    runtime = replace(env.runtime, thresholds=Thresholds(0.43, 0.0))
    with TestClient(create_app(runtime)) as client:
        body = client.get("/api/v1/admin/abstention", headers=env.auth("admin")).json()
    assert body == {
        "source": "fixed",
        "thresholds": {"min_dense": 0.43, "min_coverage": 0.0, "min_key_coverage": 0.0},
        "calibration": None,
    }


def test_the_wire_schema_is_the_records_fields_without_the_vocabulary() -> None:
    """Built from the records: every field of ``Calibration`` but its vocabulary (sent only
    as its size), every field of ``Thresholds``; nothing else is accepted."""
    record = [f.name for f in dataclasses.fields(Calibration)]
    assert list(AbstentionCalibration.model_fields) == [
        *(n for n in record if n != "vocabulary"),
        "common_terms",
    ]
    assert list(AbstentionThresholds.model_fields) == [
        f.name for f in dataclasses.fields(Thresholds)
    ]
    with pytest.raises(ValidationError):
        AbstentionThresholds(min_dense=0.4, min_coverage=0.0, min_key_coverage=0.0, vocabulary=[])
