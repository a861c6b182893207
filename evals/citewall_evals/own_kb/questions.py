"""The questions file of ``citewall eval kb``: one JSON object a line, and its one loader.

Each line asks one question of the deployment's knowledge base::

    {"question": "How long can I void a label?", "expected": ["shipping-void-window"],
     "facts": ["Labels can be voided for 14 days"]}
    {"question": "Do you ship to Mars?", "unanswerable": true}
    {"question": "And for NorthPost?", "expected": ["https://help.example.com/void"],
     "conversation": [{"role": "user", "content": "How do I void a label?"}]}

- ``question``: the member's words (a non-empty string);
- either ``expected``: the cards that answer it (card ids or the cards' URLs, at least one), or
  ``"unanswerable": true``: the knowledge base cannot answer it, so the right reply is
  ``not_found``;
- optionally ``facts``: short statements the answer must contain (nugget recall), only with
  ``expected``; ``conversation``: the earlier messages of a follow-up, oldest first, each
  ``{"role": "user" | "assistant", "content": ...}``; ``id``: a name for the question in the
  report (default: ``line N``); ``groups``: the groups of the member who asks it (a list of
  group names, ``[]`` for a member in no group), asked and retrieved as that member instead of
  the run's ``--group`` (``kb.audiences``).

Any other field is refused (a misspelt ``expectd`` would otherwise turn an answerable question
into a silent one). A bad line is a ``UserError`` naming the file, the line and the field.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from citewall.errors import UserError
from citewall.generation.protocols import Turn
from citewall.kb.audiences import audience_problem

FIELDS = frozenset(
    {"id", "question", "expected", "unanswerable", "facts", "conversation", "groups"}
)
ROLES = ("user", "assistant")


@dataclass(frozen=True, slots=True)
class KbQuestion:
    """One line of a questions file. ``expected`` is empty exactly when ``unanswerable``."""

    id: str
    question: str
    expected: tuple[str, ...] = ()
    unanswerable: bool = False
    facts: tuple[str, ...] = ()
    conversation: tuple[Turn, ...] = ()
    #: The asking member's groups (sorted, no duplicates); None: the run's ``--group``.
    groups: tuple[str, ...] | None = None

    def as_json(self) -> dict[str, Any]:
        """The line this question was read from, in its shortest form (``parse_line`` reads it
        back as the same question)."""
        row: dict[str, Any] = {"id": self.id, "question": self.question}
        if self.unanswerable:
            row["unanswerable"] = True
        else:
            row["expected"] = list(self.expected)
        if self.facts:
            row["facts"] = list(self.facts)
        if self.conversation:
            row["conversation"] = [
                {"role": t.role, "content": t.content} for t in self.conversation
            ]
        if self.groups is not None:
            row["groups"] = list(self.groups)
        return row


class QuestionLineError(ValueError):
    """What is wrong with one line, and in which field (``load_kb_questions`` adds file:line)."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}" if field else problem)
        self.field = field


def _text(value: Any, field: str) -> str:
    if not isinstance(value, str):
        raise QuestionLineError(field, f"must be a string, not {_kind(value)}")
    if not value.strip():
        raise QuestionLineError(field, "must not be empty")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise QuestionLineError(field, "holds a lone surrogate (not a character)") from None
    return value


def _texts(value: Any, field: str) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise QuestionLineError(field, f"must be a list of strings, not {_kind(value)}")
    return tuple(_text(item, f"{field}[{i}]") for i, item in enumerate(value))


def _turn(value: Any, field: str) -> Turn:
    if not isinstance(value, dict):
        raise QuestionLineError(
            field, f"must be an object with role and content, not {_kind(value)}"
        )
    unknown = sorted(set(value) - {"role", "content"})
    if unknown:
        raise QuestionLineError(f"{field}.{unknown[0]}", "unknown field (role and content only)")
    role = value.get("role")
    if role not in ROLES:
        raise QuestionLineError(f"{field}.role", f"must be user or assistant, not {role!r}")
    content = _text(value.get("content"), f"{field}.content")
    return Turn("user" if role == "user" else "assistant", content)


def _groups(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise QuestionLineError("groups", f"must be a list of group names, not {_kind(value)}")
    for i, name in enumerate(value):
        if problem := audience_problem(name):
            raise QuestionLineError(f"groups[{i}]", problem)
    return tuple(sorted(set(value)))


def _kind(value: Any) -> str:
    return (
        "null" if value is None else f"a JSON {_JSON_KINDS.get(type(value), type(value).__name__)}"
    )


_JSON_KINDS = {
    dict: "object",
    list: "list",
    str: "string",
    bool: "boolean",
    int: "number",
    float: "number",
}


def parse_line(row: Any, default_id: str) -> KbQuestion:
    """One decoded line as a ``KbQuestion``; ``QuestionLineError`` naming the bad field.

    >>> parse_line({"question": "Refunds?", "expected": ["refund-policy"]}, "line 1").expected
    ('refund-policy',)
    >>> parse_line({"question": "Mars?", "unanswerable": True}, "line 2").unanswerable
    True
    """
    if not isinstance(row, dict):
        raise QuestionLineError("", f"must be a JSON object, not {_kind(row)}")
    unknown = sorted(set(row) - FIELDS)
    if unknown:
        raise QuestionLineError(unknown[0], f"unknown field (known: {', '.join(sorted(FIELDS))})")
    if "question" not in row:
        raise QuestionLineError("question", "missing")
    question = _text(row["question"], "question")
    qid = _text(row["id"], "id") if "id" in row else default_id
    unanswerable = row.get("unanswerable", False)
    if not isinstance(unanswerable, bool):
        raise QuestionLineError("unanswerable", f"must be true or false, not {_kind(unanswerable)}")
    if unanswerable and "expected" in row:
        raise QuestionLineError("expected", 'give expected or "unanswerable": true, not both')
    if not unanswerable and "expected" not in row:
        raise QuestionLineError("expected", 'missing: give expected or "unanswerable": true')
    expected = () if unanswerable else _texts(row["expected"], "expected")
    if not unanswerable and not expected:
        raise QuestionLineError("expected", "must name at least one card (or use unanswerable)")
    facts = _texts(row["facts"], "facts") if "facts" in row else ()
    if facts and unanswerable:
        raise QuestionLineError("facts", "an unanswerable question has no facts to state")
    conversation: tuple[Turn, ...] = ()
    if "conversation" in row:
        value = row["conversation"]
        if not isinstance(value, list):
            raise QuestionLineError(
                "conversation", f"must be a list of messages, not {_kind(value)}"
            )
        conversation = tuple(_turn(m, f"conversation[{i}]") for i, m in enumerate(value))
    groups = _groups(row["groups"]) if "groups" in row else None
    return KbQuestion(qid, question, expected, unanswerable, facts, conversation, groups)


def parse_questions(data: bytes, name: str) -> list[KbQuestion]:
    """Every question of a questions file's bytes (``name`` is how errors call the file).

    A line that is not UTF-8 or not JSON, a bad field, two questions with one ``id``, or a file
    without a question is a ``UserError``: ``name:line: field: what is wrong``.
    """
    out: list[KbQuestion] = []
    seen: dict[str, int] = {}
    for n, raw in enumerate(data.split(b"\n"), start=1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise UserError(f"{name}:{n}: not UTF-8 (byte {exc.start + 1} of the line)") from None
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise UserError(f"{name}:{n}: not JSON ({exc})") from None
        try:
            question = parse_line(row, f"line {n}")
        except QuestionLineError as exc:
            raise UserError(f"{name}:{n}: {exc}") from None
        if question.id in seen:
            raise UserError(f"{name}:{n}: id: {question.id!r} is already line {seen[question.id]}")
        seen[question.id] = n
        out.append(question)
    if not out:
        raise UserError(f"{name}: no question in the file (one JSON object a line)")
    return out


def load_kb_questions(path: Path) -> list[KbQuestion]:
    """The questions of the file at ``path`` (``parse_questions``); a missing or unreadable
    file is a ``UserError`` too."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UserError(f"{path}: cannot read the questions file ({exc.strerror or exc})") from None
    return parse_questions(data, str(path))


def dump_questions(questions: Sequence[KbQuestion]) -> str:
    """A questions file holding ``questions`` (one line each)."""
    return "".join(json.dumps(q.as_json(), ensure_ascii=False) + "\n" for q in questions)
