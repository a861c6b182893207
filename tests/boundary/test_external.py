"""The serve boundary: external_sources_only + the metadata allowlist (decision 0002,
docs/decisions/0002-external-only-citations.md).

Rows are served as a member's view reads them: stored JSON validated once
(``readable_sources``), then the boundary."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from testenv import examples

from citewall.boundary.external import METADATA_ALLOWLIST, SourcePublic, external_sources_only
from citewall.kb.urls import url_problem
from citewall.storage.sources import StoredSource, readable_sources

CANARY_T = "CWLEAKT-b0und"
CANARY_M = "CWLEAKM-b0und"
CANARY_B = "CWLEAKB-b0und"


def internal_row() -> dict[str, Any]:
    return StoredSource(
        n=1,
        card_id="playbook-escalation",
        title=f"Escalation playbook {CANARY_T}",
        text=f"Escalate after two failed refunds. {CANARY_B}",
        span="Escalate after two failures [1].",
        metadata={
            "title": f"Escalation playbook {CANARY_T}",
            "author": "ann",
            "owner_note": CANARY_M,
            "content_hash": "abc",
        },
    ).model_dump(mode="json")


def external_row() -> dict[str, Any]:
    return StoredSource(
        n=2,
        card_id="help-refunds",
        title="Refunds",
        text="Refunds take five business days to reach your card.",
        span=f"Answer text with internal knowledge {CANARY_B} [2].",
        source_url="https://help.example/refunds",
        source_license="CC-BY-4.0",
        retrieved_score=87.0,
        metadata={
            "url": "https://help.example/refunds",
            "license": "CC-BY-4.0",
            "title": "Refunds",
            "author": "bob",
            "path": "/srv/kb/refunds.md",
            "content_hash": "deadbeef",
            "owner_note": CANARY_M,
            "section": "billing",
        },
    ).model_dump(mode="json")


def served(rows: Any, *, hybrid_path: str | None) -> list[SourcePublic]:
    """The member's view of stored rows: validated when read, then the serve boundary."""
    return external_sources_only(readable_sources(rows), hybrid_path=hybrid_path)


def test_internal_dropped_external_rebuilt_from_allowlisted_data() -> None:
    out = served([internal_row(), external_row()], hybrid_path="full")
    assert [s.card_id for s in out] == ["help-refunds"]
    (s,) = out
    assert s.url == "https://help.example/refunds"
    assert s.license == "CC-BY-4.0"
    assert s.retrieved_score == 87.0
    assert s.title == "Refunds"
    assert s.excerpt == "Refunds take five business days to reach your card."
    assert s.metadata == {
        "url": "https://help.example/refunds",
        "license": "CC-BY-4.0",
        "title": "Refunds",
        "section": "billing",
    }
    dumped = s.model_dump_json()
    for secret in (
        CANARY_T,
        CANARY_M,
        CANARY_B,
        "author",
        "path",
        "content_hash",
        "span",
        "Answer text",
    ):
        assert secret not in dumped


def test_the_excerpt_is_the_card_text_never_the_span() -> None:
    row = external_row()
    row["text"] = "word " * 200
    (s,) = served([row], hybrid_path="full")
    assert len(s.excerpt) <= 281 and s.excerpt.endswith("…")
    assert CANARY_B not in s.excerpt


def test_unsafe_or_missing_urls_are_dropped() -> None:
    for url in (
        "javascript:alert(1)",
        "data:text/html,<b>x</b>",
        "",
        "   ",
        "https://a b",
        "ftp://x.example",
        None,
        42,
        ["https://x.example"],
        "https://x.example/\u202e",
    ):
        row = external_row()
        row["metadata"]["url"] = url
        row["source_url"] = None
        assert served([row], hybrid_path="full") == [], url


def test_source_url_outside_metadata_does_not_make_a_source_external() -> None:
    row = internal_row()
    row["source_url"] = "https://evil.example"  # not in allowlisted metadata: not external
    row["url"] = "https://evil.example"
    assert served([row], hybrid_path="full") == []


def test_rows_that_are_not_stored_sources_are_not_served() -> None:
    # Shapes no writer produces (migration 0009 rewrote the legacy ones): left out, not guessed.
    row = external_row()
    row["metadata"] = json.dumps(row["metadata"])
    legacy = {
        "id": "old-card",
        "title": "Old",
        "text": "Old text.",
        "metadata": {"url": "https://old.example/a", "author": "x", "path": "/p"},
    }
    out = served(
        [external_row(), row, legacy, "garbage", None, 7, {"metadata": "{not json"}],
        hybrid_path="full",
    )
    assert [s.card_id for s in out] == ["help-refunds"]
    assert served({"card_id": "x"}, hybrid_path="full") == []


def test_scores_outside_range_or_not_numbers_are_dropped() -> None:
    for bad in (float("nan"), float("inf"), -1.0, 101.0):
        row = external_row()
        row["retrieved_score"] = bad
        (s,) = served([row], hybrid_path="full")
        assert s.retrieved_score is None
    for not_a_number in ("90", True):  # not a stored source: the row is left out
        row = external_row()
        row["retrieved_score"] = not_a_number
        assert served([row], hybrid_path="full") == []


def test_duplicates_keep_the_first() -> None:
    a, b = external_row(), external_row()
    b["title"] = "Second"
    b["metadata"]["title"] = "Second"
    assert [s.title for s in served([a, b], hybrid_path="full")] == ["Refunds"]


def test_source_public_cannot_hold_an_internal_field() -> None:
    s = SourcePublic.model_validate(
        {
            "card_id": "x",
            "url": "https://e.example",
            "text": CANARY_B,
            "span": "s",
            "author": "ann",
            "metadata": {"author": "ann", "path": "/x", "title": "T", "n": 3},
        }
    )
    assert set(s.model_dump()) == {
        "card_id",
        "title",
        "url",
        "license",
        "retrieved_score",
        "excerpt",
        "metadata",
    }
    assert s.metadata == {"title": "T"}
    assert CANARY_B not in s.model_dump_json()


# -- properties -------------------------------------------------------------------------------

keys = st.sampled_from(
    [
        *sorted(METADATA_ALLOWLIST),
        *["author", "path", "content_hash", "body", "owner_note", "team", "Url", "URL"],
    ]
)
values = st.one_of(
    st.none(),
    st.integers(),
    st.floats(),
    st.booleans(),
    st.text(max_size=15),
    st.sampled_from(
        [
            "https://ok.example/x",
            "javascript:alert(1)",
            "http://",
            CANARY_M,
            "https://ok.example/" + CANARY_M,
        ]
    ),
    st.lists(st.text(max_size=3), max_size=2),
    st.dictionaries(st.text(max_size=3), st.text(max_size=3), max_size=2),
)
internal_fields = {
    "span": st.just(CANARY_B),
    "retrieved_score": st.one_of(st.floats(), st.integers(), st.none()),
    "author": st.just(CANARY_M),
    "source_url": st.just("https://smuggled.example"),
}
#: Rows that are external, or nearly: a card id and a metadata url (valid or not) next to
#: internal keys and canaries. Without these the random rows above are almost never external
#: and the property below would check an empty output.
near_external = st.builds(
    lambda row, extra, url: {**row, "metadata": {**extra, "url": url}},
    st.fixed_dictionaries(
        {
            "card_id": st.sampled_from(["help-a", "help-b", "pb-c"]),
            "title": st.one_of(st.text(max_size=10), st.none()),
            "text": st.one_of(st.text(max_size=40), st.just(f"Body {CANARY_B}")),
        },
        optional=internal_fields,
    ),
    st.dictionaries(keys, values, max_size=6),
    st.sampled_from(
        [
            "https://ok.example/x",
            "https://ok.example/" + CANARY_M,
            "http://ok.example/a?b=c",
            "javascript:alert(1)",
            "https://ok.example/\u200b",
        ]
    ),
)
rows = st.one_of(
    st.fixed_dictionaries(
        {
            "card_id": st.one_of(st.text(max_size=8), st.none(), st.integers()),
            "title": st.one_of(st.text(max_size=10), st.none()),
            "text": st.one_of(st.text(max_size=40), st.none()),
            "metadata": st.one_of(st.dictionaries(keys, values, max_size=8), values),
        },
        optional=internal_fields,
    ),
    near_external,
    values,
)


paths = st.sampled_from(["full", "rrf_only", "dense_only", None, "", "FULL", "legacy"])


@settings(max_examples=examples(400), deadline=None)
@given(st.lists(rows, max_size=6), paths)
def test_output_is_always_external_and_allowlisted(batch: list[Any], path: str | None) -> None:
    out = served(batch, hybrid_path=path)
    if path != "full":  # a score exists only for reranked answers, whatever a row stored
        assert all(s.retrieved_score is None for s in out)
    for s in out:
        assert isinstance(s, SourcePublic)
        assert url_problem(s.url) is None
        assert s.url == s.metadata["url"]
        assert set(s.metadata) <= METADATA_ALLOWLIST
        assert all(isinstance(v, str) for v in s.metadata.values())
        assert s.url != "https://smuggled.example"
        dumped = s.model_dump_json()
        # A canary planted only in non-allowlisted places never survives.
        allowlisted_values = " ".join(s.metadata.values())
        if CANARY_M not in allowlisted_values and CANARY_M not in s.excerpt + s.title + s.card_id:
            assert CANARY_M not in dumped
        if CANARY_B not in s.excerpt:
            assert CANARY_B not in dumped
        for key in ("author", "path", "content_hash", "body", "owner_note", "span", "text"):
            assert f'"{key}"' not in dumped
    assert len({s.card_id for s in out}) == len(out)


def test_stored_source_models_are_served_as_built() -> None:
    model = StoredSource.model_validate(external_row())
    assert [s.card_id for s in external_sources_only([model], hybrid_path="full")] == [
        "help-refunds"
    ]


def test_a_stored_score_is_served_only_on_the_full_path() -> None:
    row = external_row()  # a corrupt row: a score stored with any path
    assert [s.retrieved_score for s in served([row], hybrid_path="full")] == [87.0]
    for path in ("rrf_only", "dense_only", None, "unknown"):
        (s,) = served([row], hybrid_path=path)
        assert s.retrieved_score is None, path
        assert s.url == "https://help.example/refunds"  # the source itself is still served
