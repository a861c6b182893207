"""The calibration fit (pure): properties that must hold whatever the probes."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st
from testenv import examples

from citewall.retrieval.answerability import Signals, Thresholds, Vocabulary
from citewall.retrieval.calibration import (
    SMALL_KB_MARGIN,
    TARGET_ANSWERED,
    Calibration,
    fit,
    guard_small_kb,
)

signal = st.builds(
    Signals,
    dense=st.floats(-1, 1, allow_nan=False).map(lambda x: round(x, 3)),
    coverage=st.just(1.0),
    key_coverage=st.sampled_from([0.0, 0.25, 0.5, 2 / 3, 1.0]),
)
signals = st.lists(signal, max_size=40)


def answered(t: Thresholds, probes: list[Signals]) -> int:
    return sum(t.answerable(s) for s in probes)


@settings(max_examples=examples(150))
@given(answerable=signals, unanswerable=signals)
def test_the_fit_always_answers_the_target_share_of_answerable_probes(
    answerable: list[Signals], unanswerable: list[Signals]
) -> None:
    fitted = fit(answerable, unanswerable)
    assert answered(fitted.thresholds, answerable) >= math.ceil(TARGET_ANSWERED * len(answerable))
    assert fitted.answered_rate >= TARGET_ANSWERED or not answerable


@settings(max_examples=examples(150))
@given(answerable=signals, unanswerable=signals, more=signals)
def test_adding_answerable_probes_never_raises_thresholds_past_what_keeps_them_answered(
    answerable: list[Signals], unanswerable: list[Signals], more: list[Signals]
) -> None:
    everything = answerable + more
    fitted = fit(everything, unanswerable).thresholds
    assert answered(fitted, everything) >= math.ceil(TARGET_ANSWERED * len(everything))


@settings(max_examples=examples(150))
@given(answerable=signals, unanswerable=signals, more=signals)
def test_adding_unanswerable_probes_never_refuses_fewer_of_the_old_ones_overall(
    answerable: list[Signals], unanswerable: list[Signals], more: list[Signals]
) -> None:
    before = fit(answerable, unanswerable)
    after = fit(answerable, unanswerable + more)
    refused_before = len(unanswerable) - answered(before.thresholds, unanswerable)
    refused_after = len(unanswerable + more) - answered(after.thresholds, unanswerable + more)
    assert refused_after >= refused_before


@settings(max_examples=examples(200))
@given(answerable=signals, unanswerable=signals, seed=st.randoms(use_true_random=False))
def test_the_fit_does_not_depend_on_the_order_of_the_probes(
    answerable: list[Signals], unanswerable: list[Signals], seed: object
) -> None:
    shuffled_a, shuffled_u = list(answerable), list(unanswerable)
    seed.shuffle(shuffled_a)  # type: ignore[attr-defined]
    seed.shuffle(shuffled_u)  # type: ignore[attr-defined]
    assert fit(answerable, unanswerable) == fit(shuffled_a, shuffled_u)


@settings(max_examples=examples(200))
@given(answerable=st.lists(signal, min_size=1, max_size=10), unanswerable=signals)
def test_the_small_kb_guard_keeps_the_dense_threshold_below_its_own_content(
    answerable: list[Signals], unanswerable: list[Signals]
) -> None:
    guarded = guard_small_kb(fit(answerable, unanswerable), answerable)
    assert guarded.min_dense <= min(s.dense for s in answerable) - SMALL_KB_MARGIN + 1e-6


def test_the_dense_threshold_sits_halfway_above_the_highest_refused_probe() -> None:
    a = [Signals(d, 1.0, 1.0) for d in (0.6, 0.7, 0.8, 0.9)]
    u = [Signals(0.3, 1.0, 1.0), Signals(0.5, 1.0, 1.0)]
    fitted = fit(a, u, target=1.0)
    assert fitted.thresholds.min_dense == 0.55
    assert (fitted.answered_rate, fitted.refusal_rate) == (1.0, 1.0)


def test_key_coverage_refuses_the_near_miss_dense_alone_cannot() -> None:
    a = [Signals(d, 1.0, 1.0) for d in (0.5, 0.6, 0.7)]
    near_miss = Signals(0.65, 1.0, 0.0)  # on topic, names a thing the KB never mentions
    fitted = fit(a, [near_miss], target=1.0)
    assert fitted.thresholds.min_key_coverage == 1.0
    assert fitted.thresholds.min_dense < 0.5
    assert fitted.refusal_rate == 1.0


def test_no_probes_answer_everything() -> None:
    fitted = fit([Signals(0.5, 1.0, 1.0)], [])
    assert fitted.thresholds.answerable(Signals(-1.0, 0.0, 0.0))


def test_a_calibration_reads_back_as_it_was_written() -> None:
    calibration = Calibration(
        thresholds=Thresholds(0.31, 0.0, 0.5),
        vocabulary=Vocabulary(frozenset({"ship", "refund"})),
        fitted_at="2026-12-02T03:00:00+00:00",
        kb_version="v-1-abcdef",
        kb_cards=4,
        sampled_cards=4,
        probes={"answerable": 8, "near_miss": 4, "off_domain": 101},
        answered_rate=1.0,
        refusal_rate=0.97,
        refusal_by_kind={"near_miss": 1.0, "off_domain": 0.96},
        signal_auc={"dense": 0.9},
        guard="small KB",
    )
    assert Calibration.from_json(calibration.to_json()) == calibration
