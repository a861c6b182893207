"""The questions file of ``citewall eval kb``: what a line may hold, and the error for each bad
one (file, line and field)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from citewall.errors import UserError
from citewall.generation.protocols import Turn
from citewall_evals.own_kb.questions import (
    KbQuestion,
    dump_questions,
    load_kb_questions,
    parse_questions,
)


def lines(*rows: object) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode("utf-8")


def error_of(data: bytes) -> str:
    with pytest.raises(UserError) as info:
        parse_questions(data, "q.jsonl")
    return str(info.value)


def test_every_field_read_into_the_record() -> None:
    data = lines(
        {"question": "How long can I void a label?", "expected": ["void", "https://x.test/v"]},
        {"id": "mars", "question": "Do you ship to Mars?", "unanswerable": True},
        {
            "question": "And for NorthPost?",
            "expected": ["void"],
            "facts": ["14 days"],
            "conversation": [
                {"role": "user", "content": "How do I void a label?"},
                {"role": "assistant", "content": "Open the label [1]."},
            ],
        },
    )
    first, mars, follow = parse_questions(b"\n" + data + b"  \n", "q.jsonl")
    assert first == KbQuestion(
        "line 2", "How long can I void a label?", ("void", "https://x.test/v")
    )
    assert mars == KbQuestion("mars", "Do you ship to Mars?", (), True)
    assert follow.facts == ("14 days",)
    assert follow.conversation == (
        Turn("user", "How do I void a label?"),
        Turn("assistant", "Open the label [1]."),
    )
    assert first.groups is None


def test_groups_are_the_asking_members_sorted_and_none_means_the_runs() -> None:
    data = lines(
        {"question": "q", "expected": ["a"], "groups": ["partners", "enterprise", "partners"]},
        {"question": "q", "expected": ["a"], "groups": []},
        {"question": "q", "expected": ["a"]},
    )
    both, nogroup, run = parse_questions(data, "q.jsonl")
    assert both.groups == ("enterprise", "partners")
    assert nogroup.groups == ()
    assert run.groups is None
    assert nogroup.as_json()["groups"] == [] and "groups" not in run.as_json()


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        ({"expected": ["a"]}, "q.jsonl:1: question: missing"),
        (
            {"question": 3, "expected": ["a"]},
            "q.jsonl:1: question: must be a string, not a JSON number",
        ),
        ({"question": "  ", "expected": ["a"]}, "q.jsonl:1: question: must not be empty"),
        ({"question": "q"}, "q.jsonl:1: expected: missing"),
        (
            {"question": "q", "expected": ["a"], "unanswerable": True},
            "q.jsonl:1: expected: give expected",
        ),
        (
            {"question": "q", "unanswerable": "yes"},
            "q.jsonl:1: unanswerable: must be true or false",
        ),
        ({"question": "q", "unanswerable": False}, "q.jsonl:1: expected: missing"),
        ({"question": "q", "expected": "a"}, "q.jsonl:1: expected: must be a list of strings"),
        ({"question": "q", "expected": []}, "q.jsonl:1: expected: must name at least one card"),
        ({"question": "q", "expected": ["a", 2]}, "q.jsonl:1: expected[1]: must be a string"),
        ({"question": "q", "expected": ["a"], "facts": "x"}, "q.jsonl:1: facts: must be a list"),
        (
            {"question": "q", "unanswerable": True, "facts": ["x"]},
            "q.jsonl:1: facts: an unanswerable",
        ),
        (
            {"question": "q", "expected": ["a"], "conversation": {}},
            "q.jsonl:1: conversation: must be a list",
        ),
        (
            {"question": "q", "expected": ["a"], "conversation": [{"role": "bot", "content": "x"}]},
            "q.jsonl:1: conversation[0].role: must be user or assistant",
        ),
        (
            {"question": "q", "expected": ["a"], "conversation": [{"role": "user"}]},
            "q.jsonl:1: conversation[0].content: must be a string, not null",
        ),
        (
            {"question": "q", "expected": ["a"], "groups": "enterprise"},
            "q.jsonl:1: groups: must be a list of group names, not a JSON string",
        ),
        (
            {"question": "q", "expected": ["a"], "groups": ["enterprise", "Enterprise Plan"]},
            "q.jsonl:1: groups[1]: 'Enterprise Plan' is not a group name",
        ),
        (
            {"question": "q", "expected": ["a"], "groups": [7]},
            "q.jsonl:1: groups[0]: 7 is not a group name",
        ),
        ({"question": "q", "expectd": ["a"]}, "q.jsonl:1: expectd: unknown field"),
        (["q"], "q.jsonl:1: must be a JSON object, not a JSON list"),
    ],
)
def test_a_bad_line_names_file_line_and_field(row: object, expected: str) -> None:
    assert error_of(lines(row)).startswith(expected)


def test_json_utf8_surrogates_duplicates_and_empty_files() -> None:
    good = lines({"question": "q", "expected": ["a"]})
    assert error_of(good + b'{"question": \n').startswith("q.jsonl:2: not JSON")
    assert (
        error_of(good + b'{"question": "caf\xe9"}\n')
        == "q.jsonl:2: not UTF-8 (byte 18 of the line)"
    )
    assert error_of(b'{"question": "\\ud800", "expected": ["a"]}').startswith(
        "q.jsonl:1: question: holds a lone surrogate"
    )
    twice = lines({"id": "x", "question": "q", "expected": ["a"]}) * 2
    assert error_of(twice) == "q.jsonl:2: id: 'x' is already line 1"
    assert error_of(b"\n \n") == "q.jsonl: no question in the file (one JSON object a line)"


def test_a_missing_file_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="cannot read the questions file"):
        load_kb_questions(tmp_path / "absent.jsonl")


texts = st.lists(
    st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=20).filter(str.strip),
    max_size=3,
)
clean = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40).filter(
    str.strip
)
turns = st.lists(st.builds(Turn, st.sampled_from(["user", "assistant"]), clean), max_size=3)
group_names = st.from_regex(r"[a-z0-9][a-z0-9_-]{0,10}", fullmatch=True)
groups = st.none() | st.lists(group_names, max_size=3).map(lambda g: tuple(sorted(set(g))))


@st.composite
def questions(draw: st.DrawFn) -> list[KbQuestion]:
    out = []
    for i in range(draw(st.integers(1, 4))):
        unanswerable = draw(st.booleans())
        out.append(
            KbQuestion(
                id=f"q{i}",
                question=draw(clean),
                expected=() if unanswerable else tuple(draw(texts.filter(bool))),
                unanswerable=unanswerable,
                facts=() if unanswerable else tuple(draw(texts)),
                conversation=tuple(draw(turns)),
                groups=draw(groups),
            )
        )
    return out


@given(questions())
def test_a_dumped_file_loads_as_the_same_questions(qs: list[KbQuestion]) -> None:
    assert parse_questions(dump_questions(qs).encode("utf-8"), "q.jsonl") == qs


@given(questions(), st.integers(0, 3), st.sampled_from(["question", "expected", "unanswerable"]))
def test_breaking_one_field_of_one_line_names_that_line(
    qs: list[KbQuestion], which: int, field: str
) -> None:
    rows = [q.as_json() for q in qs]
    n = which % len(rows)
    rows[n].pop("expected", None) if field == "unanswerable" else rows[n].__setitem__(field, 7)
    if field == "unanswerable":
        rows[n]["unanswerable"] = False
    message = error_of(lines(*rows))
    assert message.startswith(f"q.jsonl:{n + 1}: ")
    assert field in message or "expected" in message
