"""Follow-up condensation: the deterministic rule, and the model rewrite with its fallback."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from citewall.errors import GenerationError
from citewall.generation.followup import (
    MAX_DEPTH,
    MAX_TERMS_ANAPHORA,
    MAX_TERMS_BEFORE_POINTER,
    ModelCondenser,
    PlainCondenser,
    RuleCondenser,
    is_followup,
    parse_rewrite,
    rewrite_messages,
    rule_query,
)
from citewall.generation.openai_compat import OpenAICompatGenerator
from citewall.generation.protocols import Turn
from citewall_evals.llm_server import Reply, ScriptedOpenAIServer

FIRST = "How long do refunds take?"


@pytest.mark.parametrize(
    "message",
    [
        "and what about annual plans?",
        "what about swiftfreight?",
        "how do I report it?",
        "can I switch that off?",
        "same for returns?",
        "how long?",
        "we also have handhelds with built in scanners",
        "paper goes dark when scratched, now what?",
        "since adding the second one our bundles show wrong stock",
        # Personal pronouns, and a closing "then", lean on the conversation too.
        "do they need to sign anything?",
        "how long until they decide?",
        "she's coming back in 3 months, will she keep her channels?",
        "what will people see if they open /docs then?",
    ],
)
def test_follow_ups_are_recognised(message: str) -> None:
    assert is_followup(message)


@pytest.mark.parametrize(
    "message",
    [
        "How do I reset my password for the mobile app?",
        "is there a fee for a swiftfreight pickup",
        "how much does parcelry protect cost for international parcels",
        "merchant wants skus to match no matter upper or lower case",
        # The pronoun points at what the message itself names.
        "customer says the parcel shows delivered but they never got it",
        # An announced new subject is retrieved alone, pronoun or not.
        "different question: where do i change my password if i know the old one",
        "unrelated, how do i make a query parameter required",
    ],
)
def test_self_contained_questions_are_not_follow_ups(message: str) -> None:
    assert not is_followup(message)


def test_a_follow_up_is_retrieved_with_the_question_before_it() -> None:
    history = [Turn("user", FIRST), Turn("assistant", "Refunds take 5 days [1].")]
    assert rule_query("and for annual plans?", history) == f"{FIRST} and for annual plans?"
    assert RuleCondenser().condense("and for annual plans?", history).method == "rule"


def test_a_topic_switch_is_retrieved_alone() -> None:
    question = "How do I reset my password for the mobile app?"
    condensed = RuleCondenser().condense(question, [Turn("user", FIRST)])
    assert (condensed.query, condensed.method) == (question, "standalone")


def test_a_chain_of_follow_ups_reaches_back_at_most_max_depth_questions() -> None:
    history = [Turn("user", f"and q{i}?") for i in range(MAX_DEPTH + 3)]
    query = rule_query("and this?", history)
    # The new message plus MAX_DEPTH earlier ones: older questions fall off.
    assert query.count("and q") == MAX_DEPTH
    assert query.endswith("and this?")


def test_plain_condenser_ignores_the_conversation() -> None:
    assert PlainCondenser().condense("and for annual?", [Turn("user", FIRST)]).query == (
        "and for annual?"
    )


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (
            "How long do refunds take for annual plans?",
            "How long do refunds take for annual plans?",
        ),
        ('Question: "What about annual plans?"', "What about annual plans?"),
        ("Self-contained question: Is it free?\nBecause...", "Is it free?"),
        ("", None),
        ("???", None),
        ("x" * 500, None),
    ],
)
def test_parse_rewrite(reply: str, expected: str | None) -> None:
    assert parse_rewrite(reply) == expected


def test_rewrite_prompt_holds_the_earlier_questions_not_the_answers() -> None:
    history = [Turn("user", FIRST), Turn("assistant", "SECRET ANSWER TEXT [1].")]
    text = "\n".join(m["content"] for m in rewrite_messages("and for annual?", history))
    assert FIRST in text and "and for annual?" in text and "SECRET" not in text


@pytest.fixture
def llm() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as server:
        yield server


def _condenser(llm: ScriptedOpenAIServer, timeout_s: float = 2.0) -> ModelCondenser:
    model = OpenAICompatGenerator(base_url=llm.base_url, model="m", retries=0)
    return ModelCondenser(model, timeout_s=timeout_s)


def test_the_model_rewrites_a_follow_up(llm: ScriptedOpenAIServer) -> None:
    rewritten = "How long do refunds take for annual plans?"
    llm.enqueue(rewritten)
    condensed = _condenser(llm).condense("and for annual plans?", [Turn("user", FIRST)])
    assert (condensed.query, condensed.method) == (rewritten, "model")
    sent = llm.chat_requests[-1]["messages"]
    assert FIRST in sent[-1]["content"] and sent[-1]["content"].count("annual plans") == 1


def test_a_first_message_is_not_sent_to_the_model(llm: ScriptedOpenAIServer) -> None:
    condensed = _condenser(llm).condense(FIRST, [])
    assert (condensed.query, condensed.method) == (FIRST, "standalone")
    assert llm.chat_requests == []


@pytest.mark.parametrize("failure", ["status", "empty", "slow"])
def test_a_failed_rewrite_falls_back_to_the_rule(llm: ScriptedOpenAIServer, failure: str) -> None:
    llm.enqueue(
        {
            "status": Reply(status=500),
            "empty": Reply(text="   "),
            "slow": Reply(text="How long?", delay_s=1.0),
        }[failure]
    )
    condensed = _condenser(llm, timeout_s=0.2).condense("and for annual?", [Turn("user", FIRST)])
    assert (condensed.query, condensed.method) == (f"{FIRST} and for annual?", "rule_fallback")


def test_complete_raises_generation_error_on_a_dead_server() -> None:
    model = OpenAICompatGenerator(base_url="http://127.0.0.1:9/v1", model="m", retries=0)
    with pytest.raises(GenerationError):
        model.complete([{"role": "user", "content": "x"}], max_tokens=8, timeout_s=0.5)


def test_a_chatty_preface_is_not_taken_for_the_question() -> None:
    reply = "Sure! Here is the rewritten question:\nHow long do refunds take for annual plans?"
    assert parse_rewrite(reply) == "How long do refunds take for annual plans?"


@pytest.mark.parametrize("message", ["What is the capital of Mongolia?", "How do I print labels?"])
def test_a_short_whole_question_is_not_a_follow_up(message: str) -> None:
    assert not is_followup(message)


#: Topic words no cue or pronoun list holds (each one content term).
TOPIC = st.sampled_from(
    [
        "refund",
        "label",
        "parcel",
        "invoice",
        "carrier",
        "customs",
        "pickup",
        "printer",
        "webhook",
        "password",
        "channel",
        "stream",
        "export",
        "theme",
        "token",
        "server",
    ]
)
HISTORY = [Turn("user", FIRST)]


@given(st.text(max_size=80))
def test_a_first_message_is_never_merged(message: str) -> None:
    assert rule_query(message, []) == message
    assert rule_query(message, [Turn("assistant", "Hello!")]) == message


@given(st.text(max_size=80))
def test_the_query_is_the_message_or_ends_with_it(message: str) -> None:
    query = rule_query(message, HISTORY)
    assert query in {message, f"{FIRST} {message}"}
    assert (query != message) == is_followup(message)


@given(st.sampled_from(["different question:", "unrelated,", "new topic -"]), st.text(max_size=60))
def test_an_announced_new_subject_is_never_merged(opening: str, rest: str) -> None:
    message = f"{opening} and what about {rest} too, then?"
    assert rule_query(message, HISTORY) == message


@given(st.sampled_from(["and", "what about", "same for"]), st.lists(TOPIC, max_size=12))
def test_a_continuation_cue_is_always_merged(cue: str, topic: list[str]) -> None:
    message = " ".join([cue, *topic]) + "?"
    assert rule_query(message, HISTORY) == f"{FIRST} {message}"


@given(
    st.lists(
        TOPIC, min_size=MAX_TERMS_BEFORE_POINTER + 1, max_size=MAX_TERMS_ANAPHORA, unique=True
    ),
    st.sampled_from(["it", "they", "them", "that"]),
)
def test_a_pronoun_after_the_message_s_own_topic_is_not_merged(
    topic: list[str], pronoun: str
) -> None:
    message = f"my {' '.join(topic)} is broken since {pronoun} moved"
    assert rule_query(message, HISTORY) == message


@given(
    st.lists(TOPIC, max_size=MAX_TERMS_BEFORE_POINTER - 1, unique=True),
    st.sampled_from(["it", "they", "them", "that", "she", "her"]),
)
def test_a_pronoun_early_in_a_short_message_is_merged(topic: list[str], pronoun: str) -> None:
    message = f"can {pronoun} change the {' '.join(topic)} settings"
    assert rule_query(message, HISTORY) == f"{FIRST} {message}"
