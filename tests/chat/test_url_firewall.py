"""The URL firewall, end to end through the pipeline with a scripted OpenAI-compatible server.

Whatever the model writes (bare URLs, Markdown links, javascript:/data: links, raw HTML, fake
[n] markers, internal-looking text), citations stay within the retrieved context, dropped
markers are counted, no citation or member source carries a URL that did not come from KB
metadata, and the member's prose has no markers.
"""

from __future__ import annotations

from typing import Any

import pytest

from citewall.boundary.external import external_sources_only
from citewall.boundary.prose import prose_only
from citewall.chat.pipeline import NOTHING_FOUND, Answer, answer_question, stream_answer
from citewall.citations.markers import parse_markers
from citewall.errors import GenerationError
from citewall.generation.openai_compat import OpenAICompatGenerator
from citewall_evals.llm_server import Reply, ScriptedOpenAIServer

from .chat_context import CANARY_M, CANARY_T, KB_URL, FixedRetriever, make_context

HOSTILE_REPLIES = {
    "bare_url": "Void it at https://evil.example/void [1]. Then visit www.evil.example [2].",
    "markdown_link": "See [the void page](https://evil.example/phish) [1] and [2](https://x.example).",
    "javascript_link": "Click [here](javascript:alert(document.cookie)) to void [1].",
    "data_link": "Open [this](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==) [2].",
    "raw_html": 'Refunds <a href="https://evil.example">here</a><script>alert(1)</script> [1].',
    "fake_markers": "Refunds take 5 to 10 days [99]. Dispute after 15 [0]. Nope [-1]. Yes [2].",
    "only_fake_markers": "The refund reaches your Parcelry balance in 5 to 10 business days "
    "[99][0][-1] [4-7] [1000000000].",
    "internal_looking": f"The playbook title is {CANARY_T} and note {CANARY_M} [2]. "
    "card_id: pb-void-overdue, source_url: https://evil.example [1].",
    "autolink": "Go to <https://evil.example/a> [1].",
    "full_width": "Refunds go back to your balance［１］and dispute later［２，９９］.",
}
#: What each reply cites (card ids in first-appearance order) and how many marker numbers it
#: drops. The context is make_context(): [1] help-void (external), [2] pb-void-overdue
#: (internal), [3] help-pickup.
CITED = {
    "autolink": (["help-void"], 0),
    "bare_url": (["help-void", "pb-void-overdue"], 0),
    "data_link": (["pb-void-overdue"], 0),
    "fake_markers": (["pb-void-overdue"], 3),
    "full_width": (["help-void", "pb-void-overdue"], 1),
    "internal_looking": (["pb-void-overdue", "help-void"], 0),
    "javascript_link": (["help-void"], 0),
    "markdown_link": (["help-void"], 0),
    "only_fake_markers": (["help-void"], 8),  # attributed: no valid marker left
    "raw_html": (["help-void"], 0),
}
#: The only URL a citation or source may carry: the card's verified KB url.
KB_URL_OF = {"help-void": KB_URL, "pb-void-overdue": None}


def run(
    llm: ScriptedOpenAIServer, embedder: Any, reply: str, path: str = "full", stream: bool = False
) -> Answer:
    gen = OpenAICompatGenerator(base_url=llm.base_url, model="fake", timeout_s=5, retries=0)
    llm.enqueue(reply)
    kwargs = {
        "retriever": FixedRetriever(make_context(path)),
        "generator": gen,
        "embedder": embedder,
    }
    if stream:
        *_, final = stream_answer("How long do void refunds take?", **kwargs)  # type: ignore[arg-type]
        assert isinstance(final, Answer)
        return final
    return answer_question("How long do void refunds take?", **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("case", sorted(HOSTILE_REPLIES))
@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_hostile_replies_never_become_links(
    llm: ScriptedOpenAIServer, embedder: Any, case: str, stream: bool
) -> None:
    reply = HOSTILE_REPLIES[case]
    answer = run(llm, embedder, reply, stream=stream)
    cited, dropped = CITED[case]
    # Citations are the valid markers' cards, the rest is counted as dropped.
    assert [c.card_id for c in answer.citations] == cited
    assert answer.dropped_markers == dropped
    # Every URL a citation or a source carries is the card's KB url, never one from the reply.
    assert [c.source_url for c in answer.citations] == [KB_URL_OF[i] for i in cited]
    assert [s.source_url for s in answer.sources] == [KB_URL_OF[i] for i in cited]
    public = external_sources_only(answer.sources, hybrid_path=answer.hybrid_path)
    assert [p.url for p in public] == ([KB_URL] if "help-void" in cited else [])
    for p in public:
        dumped = p.model_dump_json()
        assert "evil.example" not in dumped and "javascript:" not in dumped
        assert CANARY_T not in dumped and CANARY_M not in dumped
    # The member's prose has no markers left.
    assert parse_markers(prose_only(answer.content)) == []
    # The stored content is what the model wrote (plus attribution markers at most).
    assert prose_only(answer.content) == prose_only(reply)


def test_fake_markers_are_dropped_and_counted(llm: ScriptedOpenAIServer, embedder: Any) -> None:
    answer = run(llm, embedder, HOSTILE_REPLIES["fake_markers"])
    assert [c.card_id for c in answer.citations] == ["pb-void-overdue"]
    assert answer.dropped_markers == 3
    assert not answer.attributed


def test_only_fake_markers_fall_back_to_attribution(
    llm: ScriptedOpenAIServer, embedder: Any
) -> None:
    answer = run(llm, embedder, HOSTILE_REPLIES["only_fake_markers"])
    assert answer.dropped_markers == 8  # 99, 0, -1, 4, 5, 6, 7, 1000000000
    assert answer.attributed
    assert [(c.card_id, c.attributed) for c in answer.citations] == [("help-void", True)]
    # The attribution marker is inserted into the stored content after the sentence.
    assert answer.content == HOSTILE_REPLIES["only_fake_markers"][:-1] + " [1]."


def test_a_sentence_too_short_to_attribute_cites_nothing(
    llm: ScriptedOpenAIServer, embedder: Any
) -> None:
    answer = run(llm, embedder, "Refunds take time [99][0][-1] [4-7] [1000000000].")
    assert answer.dropped_markers == 8
    assert answer.citations == () and answer.sources == () and not answer.attributed
    assert [e.cited for e in answer.events] == [False, False, False]
    # Nothing supports the reply, so the member gets the honest sentence, not the model's text.
    assert (answer.answer_status, answer.content) == ("not_found", NOTHING_FOUND)


def test_markdown_link_text_marker_is_not_a_citation(
    llm: ScriptedOpenAIServer, embedder: Any
) -> None:
    answer = run(llm, embedder, "Read [2](https://x.example) for details about void refunds [1].")
    assert [c.card_id for c in answer.citations] == ["help-void"]
    assert answer.citations[0].source_url == KB_URL


def test_model_url_for_an_internal_card_gets_no_link(
    llm: ScriptedOpenAIServer, embedder: Any
) -> None:
    answer = run(llm, embedder, "Open a dispute at https://evil.example/disputes [2].")
    (c,) = answer.citations
    assert c.card_id == "pb-void-overdue" and c.source_url is None
    # Internal: the member sees no source.
    assert external_sources_only(answer.sources, hybrid_path=answer.hybrid_path) == []


def test_no_markers_at_all_are_attributed(llm: ScriptedOpenAIServer, embedder: Any) -> None:
    answer = run(
        llm, embedder, "The refund goes back to your Parcelry balance within 5 to 10 business days."
    )
    assert answer.attributed
    assert [c.card_id for c in answer.citations] == ["help-void"]
    assert answer.citations[0].attributed and answer.sources[0].attributed is True
    assert "[1]" in answer.content  # inserted into the stored content for cited-detection
    assert [e.cited for e in answer.events] == [True, False, False]


def test_generator_failure_propagates_as_generation_error(
    llm: ScriptedOpenAIServer, embedder: Any
) -> None:
    llm.default = Reply(body="<html>502 Bad Gateway</html>", status=200)
    gen = OpenAICompatGenerator(base_url=llm.base_url, model="fake", timeout_s=5, retries=0)
    with pytest.raises(GenerationError):
        answer_question(
            "q?", retriever=FixedRetriever(make_context()), generator=gen, embedder=embedder
        )


def stream_items(llm: ScriptedOpenAIServer, embedder: Any, reply: str) -> list[str | Answer]:
    """The deltas and the final answer of a stream (without its ``Generating`` event)."""
    gen = OpenAICompatGenerator(base_url=llm.base_url, model="fake", timeout_s=5, retries=0)
    llm.enqueue(reply)
    return [
        event
        for event in stream_answer(
            "How long do void refunds take?",
            retriever=FixedRetriever(make_context()),
            generator=gen,
            embedder=embedder,
        )
        if isinstance(event, str | Answer)
    ]


def test_a_streamed_reply_that_never_cites_shows_none_of_its_words(
    llm: ScriptedOpenAIServer, embedder: Any
) -> None:
    reply = "The moon is made of green cheese and the rockets fly there every night."
    *deltas, final = stream_items(llm, embedder, reply)
    assert isinstance(final, Answer)
    assert (final.answer_status, final.content, final.sources) == ("not_found", NOTHING_FOUND, ())
    assert deltas == []  # nothing of the unsupported reply was streamed


def test_a_streamed_reply_rescued_by_attribution_comes_whole_in_the_final_answer(
    llm: ScriptedOpenAIServer, embedder: Any
) -> None:
    reply = "Open a carrier dispute from the Disputes tab. Never credit the merchant manually."
    *deltas, final = stream_items(llm, embedder, reply)
    assert isinstance(final, Answer) and final.attributed
    assert final.answer_status == "answered" and [s.card_id for s in final.sources] == [
        "pb-void-overdue"
    ]
    assert deltas == []  # the final event carries it (the API sends it as the last token)


def test_a_streamed_reply_shows_from_its_first_valid_citation(
    llm: ScriptedOpenAIServer, embedder: Any
) -> None:
    reply = "Refunds take 5 to 10 business days [1]. Then open a dispute [2]."
    *deltas, final = stream_items(llm, embedder, reply)
    assert isinstance(final, Answer) and final.answer_status == "answered"
    assert "".join(str(d) for d in deltas) == reply
    assert "[1]" in str(deltas[0])  # held back until the first citation, then released at once
