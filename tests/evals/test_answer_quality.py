"""Answer-quality metrics, their controls, and abstention tuning: each metric can fail."""

from __future__ import annotations

from typing import Any

import pytest

from citewall.retrieval.answerability import Signals
from citewall.retrieval.calibration import auc
from citewall_evals.quality.abstention import TARGET_ANSWERED, abstention, tune
from citewall_evals.quality.answers import (
    NuggetJudge,
    ScoredAnswer,
    load_nugget_labels,
    load_nuggets,
    mismatched,
    score_answers,
)
from citewall_evals.report.results import control_failures


@pytest.fixture(scope="module")
def nugget_judge(embedder: Any) -> tuple[NuggetJudge, Any]:
    judge = NuggetJudge(embedder)
    return judge, judge.calibrate(load_nugget_labels())


def test_nugget_judge_agrees_with_the_hand_labels(nugget_judge: tuple[NuggetJudge, Any]) -> None:
    _, result = nugget_judge
    # 189 hand labels (99 stated, 90 not); measured leave-one-out accuracy 0.958, kappa 0.915.
    assert result.n_labels >= 120
    assert result.loo.accuracy >= 0.85, result.as_dict()
    assert result.loo.cohen_kappa >= 0.7, result.as_dict()


def test_nugget_judge_sees_a_wrong_number(nugget_judge: tuple[NuggetJudge, Any]) -> None:
    judge, _ = nugget_judge
    nugget = "SwiftFreight labels can be voided within 14 days of purchase"
    right = "SwiftFreight and BlueLine Express allow 14 days to void a label [1]."
    wrong = "SwiftFreight and BlueLine Express allow 28 days to void a label [1]."
    assert judge.stated(nugget, right)
    assert not judge.stated(nugget, wrong)
    assert not judge.stated(nugget, "")


def test_answers_under_the_wrong_question_score_badly(
    nugget_judge: tuple[NuggetJudge, Any], calibrated_judge: Any
) -> None:
    judge, _ = nugget_judge
    support, _ = calibrated_judge
    nuggets = {
        "q1": ("SwiftFreight labels can be voided within 14 days of purchase",),
        "q2": ("Annual plans cancelled within 14 days are refunded in full",),
    }
    gold = {"q1": ("help-labels-void-label",), "q2": ("help-refunds-subscription-refund-policy",)}
    void = (
        "SwiftFreight and BlueLine Express labels can be voided within 14 days [1]. The refund "
        "goes back to your Parcelry balance, not your card [1]."
    )
    refund = "Annual subscriptions cancelled within 14 days of purchase are refunded in full [1]."
    answers = [
        ScoredAnswer("q1", void, void),
        ScoredAnswer("q2", refund, refund),
    ]
    real = score_answers(answers, nuggets, gold, judge, support)
    control = score_answers(mismatched(answers), nuggets, gold, judge, support)
    assert (real.nugget_recall, real.off_topic_rate) == (1.0, 0.0)
    assert (control.nugget_recall, control.off_topic_rate) == (0.0, 1.0)


def test_staff_only_nuggets_are_kept_out_of_recall_and_counted_as_leaks(
    nugget_judge: tuple[NuggetJudge, Any], calibrated_judge: Any
) -> None:
    """Before: nuggets read only in a playbook's staff notes ("Tier 1 agents may grant up to
    25 USD") counted against member answers that may not say them."""
    member, staff = load_nuggets("test"), load_nuggets("test", audience="staff")
    every = load_nuggets("test", audience=None)
    assert set(member) == set(staff) == set(every)
    assert staff["q025"] == every["q025"] and member["q025"] == ()
    assert all(set(member[q]) | set(staff[q]) == set(every[q]) for q in every)
    assert sum(map(len, staff.values())) >= 10
    judge, _ = nugget_judge
    support, _ = calibrated_judge
    gold = {"q025": ("pb-refunds-goodwill-credits",)}
    told = "Goodwill credits are added to your Parcelry balance, never refunded to a card [1]."
    leak = "Tier 1 agents may grant up to 25 USD of goodwill credit per merchant a quarter [1]."
    clean = score_answers([ScoredAnswer("q025", told, told)], member, gold, judge, support, staff)
    leaked = score_answers([ScoredAnswer("q025", leak, leak)], member, gold, judge, support, staff)
    assert (clean.nuggets, clean.staff_nuggets, clean.staff_nuggets_leaked) == (0, 1, 0)
    assert (leaked.staff_nuggets, leaked.staff_nuggets_leaked) == (1, 1)


def test_auc_and_tuning_keep_the_answered_rate() -> None:
    assert auc([1.0], [0.0]) == 1.0 and auc([0.0], [1.0]) == 0.0 and auc([0.5], [0.5]) == 0.5
    answerable = [Signals(dense=0.5 + i / 100, coverage=1.0) for i in range(40)]
    unanswerable = [Signals(dense=0.3 + i / 100, coverage=1.0) for i in range(40)]
    tuned = tune(answerable, unanswerable)
    assert tuned.answered_rate >= TARGET_ANSWERED
    # 5% of the answerable may be lost: the two lowest (0.50, 0.51) go, recall 22 of 40.
    assert tuned.thresholds.min_dense == 0.52 and tuned.not_found_recall == 0.55
    assert tuned.signal_auc["dense"] > 0.85 and tuned.signal_auc["coverage"] == 0.5


def test_abstention_counts_by_kind() -> None:
    a = abstention(
        [("near_miss", "not_found"), ("near_miss", "answered"), ("uncovered", "not_found")],
        ["answered", "answered", "not_found", "answered"],
    )
    assert (a.not_found_recall, a.answered_rate) == (2 / 3, 0.75)
    assert a.as_dict()["not_found_recall_by_kind"] == {"near_miss": 0.5, "uncovered": 1.0}


def test_a_control_that_scores_like_the_real_metric_fails_the_run() -> None:
    good = {
        "generators": {
            "extractive": {
                "nuggets": 10,
                "nugget_recall": 0.7,
                "sentences": 10,
                "off_topic_rate": 0.2,
                "control": {"nugget_recall": 0.05, "off_topic_rate": 0.9},
            }
        }
    }
    answering = {
        "abstention": {"not_found_recall": 0.4},
        "abstention_control": {"not_found_recall": 0.0},
        "followups": {"context_ndcg": 0.7, "control_ndcg": 0.3},
    }
    assert control_failures(good, answering) == []
    bad = {"generators": {"x": {**good["generators"]["extractive"], "control": {}}}}
    bad["generators"]["x"]["control"] = {"nugget_recall": 0.69, "off_topic_rate": 0.25}
    bad_answering = {
        "abstention": {"not_found_recall": 0.4},
        "abstention_control": {"not_found_recall": 0.4},
        "followups": {"context_ndcg": 0.7, "control_ndcg": 0.65},
    }
    assert control_failures(bad, bad_answering) == [
        "answers.x.nugget_recall control",
        "answers.x.off_topic_rate control",
        "abstention.not_found_recall control",
        "followups.context_ndcg control",
    ]
