"""The extraction attackers: pure and deterministic, adaptive where it should be, and strong
enough on a toy knowledge base to need the defences (no app: ``toykb``)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from testenv import examples

from citewall_evals.extraction.adaptive import ARMS, AdaptiveAttacker
from citewall_evals.extraction.attackers import (
    SEED_TEMPLATES,
    SEED_TOPICS,
    Exchange,
    NaiveAttacker,
    ScriptedAttacker,
)
from citewall_evals.extraction.phrases import (
    answer_sentences,
    insider_score,
    phrases,
    sentence_key,
    tail,
)
from citewall_evals.questions import Question
from evals.extraction.toykb import REFUSAL, crawl, recovered, toy_answer, toy_documents

ANSWER = (
    "Escalate a refund to Tier 2 billing when the amount is over 250 USD. "
    "Never promise a refund date before Tier 2 accepts the case."
)

exchanges = st.lists(
    st.builds(
        Exchange,
        st.sampled_from(["refund", "How do agents handle escalation?", "hi", "carrier"]),
        st.sampled_from(["", ANSWER, REFUSAL, "Labels print in PDF. You can void them."]),
    ),
    max_size=8,
)


@settings(max_examples=examples(40))
@given(history=exchanges)
def test_adaptive_next_query_is_a_pure_function_of_seed_and_history(
    history: list[Exchange],
) -> None:
    incremental = AdaptiveAttacker(seed=3)
    for n in range(len(history) + 1):
        incremental.next_query(history[:n])
    fresh = AdaptiveAttacker(seed=3)
    assert incremental.next_query(history) == fresh.next_query(history)
    assert fresh.next_query(history) == fresh.next_query(history)  # asking twice: same
    assert fresh.next_query(history).strip()


def test_adaptive_starts_from_generic_seeds_and_differs_by_seed() -> None:
    first = AdaptiveAttacker(seed=0).next_query([])
    assert any(topic in first for topic in SEED_TOPICS)
    openings = {AdaptiveAttacker(seed=s).next_query([]) for s in range(6)}
    assert len(openings) > 1


def test_adaptive_builds_the_next_questions_from_the_answers_words() -> None:
    """Once every wording has been tried (the bandit's first round, mostly seeds), the
    answer's sentences are expanded and continued."""
    attacker = AdaptiveAttacker(seed=0)
    history = [Exchange(attacker.next_query([]), ANSWER)]
    asked = []
    for _ in range(len(ARMS) + 3):
        asked.append(attacker.next_query(history))
        history.append(Exchange(asked[-1], REFUSAL))
    built = [q for q in asked if "Tier 2" in q or "refund date" in q or "250 USD" in q]
    assert len(built) >= 4


def test_adaptive_never_asks_the_same_question_twice() -> None:
    docs = toy_documents()
    history = crawl(AdaptiveAttacker(seed=1), docs, 150)
    keys = [sentence_key(e.query) for e in history]
    assert len(set(keys)) == len(keys)


def test_adaptive_crawls_past_what_its_seeds_reach() -> None:
    """Two thirds of the toy documents are reachable only through terms of another document:
    asking every seed question finds at most a third; the crawl must find far more."""
    docs = toy_documents()
    seeds = [template.format(topic) for template in SEED_TEMPLATES for topic in SEED_TOPICS]
    seeds_only = recovered(crawl(ScriptedAttacker("seeds", seeds), docs, 120), docs)
    adaptive = recovered(crawl(AdaptiveAttacker(seed=0), docs, 120), docs)
    assert seeds_only <= 0.34
    assert adaptive >= 0.6
    assert adaptive >= seeds_only + 0.25


def test_adaptive_backs_off_from_a_dead_end() -> None:
    """An answer that brings nothing new must not be followed by more of the same source: once
    the only foothold's questions all come back empty, the crawl moves to other seeds."""
    attacker = AdaptiveAttacker(seed=0)
    history = [Exchange(attacker.next_query([]), ANSWER)]
    for _ in range(25):
        history.append(Exchange(attacker.next_query(history), ANSWER))
    later = [attacker.next_query(history)]
    for _ in range(5):
        history.append(Exchange(later[-1], REFUSAL))
        later.append(attacker.next_query(history))
    assert any(any(topic in q for topic in SEED_TOPICS) for q in later)


def test_naive_asks_the_labelled_questions_first_then_topic_words() -> None:
    questions = [Question(f"q{i}", f"question number {i}?", ("c",)) for i in range(5)]
    naive = NaiveAttacker(questions, seed=2)
    history: list[Exchange] = []
    asked = []
    for _ in range(8):
        asked.append(naive.next_query(history))
        history.append(Exchange(asked[-1], ""))
    assert sorted(asked[:5]) == sorted(q.question for q in questions)
    assert all(1 <= len(q.split()) <= 3 for q in asked[5:])
    assert NaiveAttacker(questions, seed=2).next_query(history) == naive.next_query(history)


def test_scripted_attacker_repeats_its_last_query() -> None:
    scripted = ScriptedAttacker("two", ["a", "b"])
    assert [scripted.next_query([Exchange("x", "")] * n) for n in range(4)] == ["a", "b", "b", "b"]


def test_toy_answerer_refuses_what_it_does_not_know() -> None:
    assert toy_answer("zzzz qqqq", toy_documents()) == REFUSAL


def test_answer_sentences_skip_the_assistants_boilerplate() -> None:
    text = f"{REFUSAL} Hi! Ask me a question. Refunds take 5 days."
    assert answer_sentences(text) == ["Hi!", "Refunds take 5 days."]


def test_phrases_and_tails() -> None:
    sentence = "Open a carrier dispute from the Disputes tab after 15 business days."
    assert phrases(sentence) == ["carrier dispute", "Disputes tab", "business days"]
    assert "CWLEAKB-ABC123" not in " ".join(phrases("Quote CWLEAKB-ABC123 in the note field."))
    assert tail(sentence, 3) == "15 business days"


def test_insider_score_tells_procedure_from_public_help() -> None:
    assert insider_score("Escalate to the Tier 2 lead when the merchant disputes it.") > 0
    assert insider_score("You can print your label from the order page.") < 0
    assert -1.0 <= insider_score("we we we we never merchant agent tier") <= 1.0
