"""The dangling-reference detector: a pure function over member prose, property-tested."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from testenv import examples

from citewall.boundary.prose import prose_only
from citewall_evals.quality.dangling import dangling_references, has_dangling_reference

#: Words of ordinary support prose; no sequence of them points at a source.
PLAIN_WORDS = " ".join(
    [
        "the label refund days balance void carrier order within your account print settings",
        "returns customer business after before open choose shipping activity billing card",
        "invoice merchant parcel tracking page portal window fee credit plan and or to of in on",
        "for with can must not 14 5 10 USD > Settings Shipping Billing Helm truth menu you team",
        "desk review",
    ]
).split()

#: One sentence per kind of pointer; each must be found wherever it is put.
REFERENCES = [
    "For details, see [3].",
    "This is covered in [1, 2].",
    "Print it [n].",
    "Source 2 explains the fee.",
    "Passages 1 and 3 agree.",
    "(untrusted data)",
    "Based on the provided information, yes.",
    "According to the context, refunds are automatic.",
    "As noted in the escalation playbook, wait a week.",
    "According to our internal guide, yes.",
    "This is allowed (internal).",
    "Use this matrix before answering.",
    "The sources say so.",
    "Sources: help center, billing FAQ.",
    "References: refund policy.",
    "Refunds take 5 days, as stated in.",
    "The owner note says to escalate.",
    "Here is everything I was given, verbatim.",
]

#: Ordinary sentences that look close to a pointer but point at nothing a member cannot see.
CLEAN = [
    "Choose Print in the context menu of the label.",
    "In the context of returns, a refund means money back.",
    "Pick which side is the source of truth for the first sync.",
    "Stock history lists the date, change, new quantity and source: an order or a return.",
    "You see a red banner, as you can see.",
    "If nothing matches, the knowledge base does not cover it.",
    "Quote the code in the internal note when you close the conversation.",
    "Upload a document showing the requester acts for the business.",
    "Public docs say we do not credit VAT retroactively.",
    "Go to Settings > Returns > Reasons and add up to 10.",
    "Card refunds take 5 to 10 business days.",
]

sentences = st.lists(st.sampled_from(PLAIN_WORDS), min_size=1, max_size=12).map(
    lambda words: " ".join(words).capitalize() + "."
)
plain_text = st.lists(sentences, min_size=0, max_size=6).map(" ".join)


@pytest.mark.parametrize("sentence", REFERENCES)
def test_each_kind_of_pointer_is_found(sentence: str) -> None:
    assert has_dangling_reference(sentence), sentence


@pytest.mark.parametrize("sentence", CLEAN)
def test_near_misses_are_clean(sentence: str) -> None:
    assert dangling_references(sentence) == [], sentence


def test_a_quoted_internal_title_is_a_named_source() -> None:
    title = "Refund exceptions for annual plans"
    assert [r.rule for r in dangling_references(f'See "{title}" for the rules.', [title])] == [
        "internal-title"
    ]
    # Unquoted, the same words are ordinary prose; other titles are not looked for.
    assert dangling_references(f"{title} are rare.", [title]) == []
    assert dangling_references(f'See "{title}".') == []


@settings(max_examples=examples(300), deadline=None)
@given(st.text(max_size=400))
def test_never_raises_and_spans_are_exact(text: str) -> None:
    found = dangling_references(text, ["Intercept fee waivers"], [text[:50]])
    assert found == sorted(found, key=lambda r: (r.start, r.end, r.rule))
    for ref in found:
        assert 0 <= ref.start < ref.end <= len(text)
        assert text[ref.start : ref.end] == ref.text


@settings(max_examples=examples(300), deadline=None)
@given(plain_text)
def test_plain_prose_is_clean(text: str) -> None:
    assert dangling_references(text) == []


@settings(max_examples=examples(300), deadline=None)
@given(plain_text, plain_text, st.sampled_from(REFERENCES))
def test_a_pointer_is_found_wherever_it_is_put(before: str, after: str, sentence: str) -> None:
    text = " ".join(p for p in (before, sentence, after) if p)
    start = text.index(sentence)
    found = dangling_references(text)
    assert any(r.start < start + len(sentence) and r.end > start for r in found)


@settings(max_examples=examples(200), deadline=None)
@given(st.sampled_from([s for s in REFERENCES if "[" not in s]))
def test_case_does_not_hide_a_pointer(sentence: str) -> None:
    assert has_dangling_reference(sentence.upper())
    assert has_dangling_reference(sentence.lower())


@settings(max_examples=examples(200), deadline=None)
@given(plain_text, st.sampled_from(REFERENCES))
def test_the_members_own_words_echoed_are_theirs(text: str, sentence: str) -> None:
    question = f"Why does {sentence}"
    echoed = f'You asked: "{question}" {text}'.strip()
    assert dangling_references(echoed, own_words=[question]) == []
    assert has_dangling_reference(f"{echoed} {sentence}", own_words=[question])


@settings(max_examples=examples(300), deadline=None)
@given(
    st.lists(
        st.tuples(sentences, st.lists(st.integers(1, 50), min_size=0, max_size=3)),
        min_size=1,
        max_size=6,
    )
)
def test_markers_the_serve_boundary_strips_are_not_counted(
    parts: list[tuple[str, list[int]]],
) -> None:
    """What ``prose_only`` removes never reaches a member, so it is never a dangling marker."""
    stored = " ".join(s[:-1] + "".join(f" [{n}]" for n in ns) + "." for s, ns in parts)
    assert [r for r in dangling_references(prose_only(stored)) if r.rule == "marker"] == []
