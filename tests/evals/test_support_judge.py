"""The support judge and its calibration on the hand-labelled sample that ships with the repo."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from citewall_evals.quality.calibration import Confusion, _best_threshold, fit
from citewall_evals.quality.citations import cited_sentences, score_answer
from citewall_evals.quality.support import UnitFeatures, content_tokens, evidence_units, key_terms


def test_tokens_and_key_terms() -> None:
    assert content_tokens("Labels can be voided for 28 days") == {"label", "void", "28", "day"}
    assert key_terms("SwiftFreight labels are never voided after seven days.") == {
        "swiftfreight",
        "never",
        "7",
    }
    units = evidence_units("NorthPost allows 28 days; SwiftFreight allows 14 days. Done here.")
    assert "SwiftFreight allows 14 days." in units and "NorthPost allows 28 days" in units


def test_calibration_agrees_with_the_hand_labels(calibrated_judge: Any) -> None:
    _judge, result = calibrated_judge
    assert result.n_labels >= 40
    c = result.loo
    assert c.total == result.n_labels
    # Measured 0.887 leave-one-out (kappa 0.77) on the shipped 71 pairs; a judge that
    # guessed the majority class would score ~0.54 and kappa 0.
    assert c.accuracy >= 0.80, result.as_dict()
    assert c.cohen_kappa >= 0.6, result.as_dict()
    assert 0.0 <= result.thresholds.weight <= 1.0


def test_judge_sees_a_swapped_number_and_a_true_statement(calibrated_judge: Any) -> None:
    judge, _ = calibrated_judge
    assert judge.supports(
        "NorthPost labels can be voided up to 28 days after purchase.", ["help-labels-void-label"]
    )
    assert not judge.supports(
        "NorthPost labels can be voided up to 90 days after purchase.", ["help-labels-void-label"]
    )
    assert not judge.supports(
        "NorthPost labels can be voided up to 28 days after purchase.",
        ["help-billing-download-invoices"],
    )


def test_alce_scores_of_a_stored_answer(calibrated_judge: Any) -> None:
    judge, _ = calibrated_judge
    content = (
        "NorthPost labels can be voided up to 28 days after purchase [1]. "
        "Invoices can be downloaded as a PDF [1][2]. Pigs can fly over the warehouse [2]. "
        "Returns need a prepaid carrier label [7]."
    )
    sources = [
        {"n": 1, "card_id": "help-labels-void-label"},
        {"n": 2, "card_id": "help-billing-download-invoices"},
    ]
    pairs, unresolved = cited_sentences(content, sources)
    assert [cards for _, cards in pairs] == [
        ["help-labels-void-label"],
        ["help-labels-void-label", "help-billing-download-invoices"],
        ["help-billing-download-invoices"],
        [],
    ]
    assert unresolved == 1  # [7] names no stored source
    counts = score_answer(content, sources, judge)
    assert counts.sentences == 4
    assert counts.uncited_sentences == 1  # its only marker [7] resolved to nothing
    assert counts.supported_sentences == 2  # the flying pigs are not supported
    assert counts.citations == 4
    # Relevant: void card for the void sentence, invoice card for the invoice sentence. The
    # void card on the invoice sentence and the invoice card on the pigs are not (ALCE).
    assert counts.relevant_citations == 2
    assert counts.precision == 0.5
    assert counts.recall == 0.5


@given(st.lists(st.tuples(st.floats(0, 1), st.booleans()), min_size=1, max_size=40))
def test_best_threshold_is_optimal(scored: list[tuple[float, bool]]) -> None:
    threshold, bacc = _best_threshold(scored)
    c = Confusion()
    for s, y in scored:
        c.add(s >= threshold, y)
    assert abs(c.balanced_accuracy - bacc) < 1e-9
    for t in {s for s, _ in scored}:
        other = Confusion()
        for s, y in scored:
            other.add(s >= t, y)
        assert other.balanced_accuracy <= bacc + 1e-9


def test_fit_separates_separable_features() -> None:
    feats = [
        [UnitFeatures(0.9, 0.9, 1.0)],
        [UnitFeatures(0.2, 0.1, 1.0)],
        [UnitFeatures(0.9, 0.9, 0.0)],
    ]
    t = fit(feats, [True, False, False])
    predictions = [
        max((f.score(t.weight) for f in fs if f.key >= t.min_key), default=-1.0) >= t.threshold
        for fs in feats
    ]
    assert predictions == [True, False, False]
