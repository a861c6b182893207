"""Read KB cards from JSONL files, Markdown with YAML front matter, and documents.

Every problem becomes an ``IngestError`` naming the file, the line and the field; a bad card
is refused and the rest of the batch still loads. A card's ``url`` must pass ``url_problem``.
Documents (HTML, PDF, DOCX, Markdown without front matter) are converted and split by
``citewall.ingest.documents``; this module finds the files and dispatches them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from citewall.config import DEFAULT_DOCUMENT_MAX_BYTES
from citewall.errors import IngestError
from citewall.ingest.documents.formats import (
    MARKDOWN_SUFFIXES,
    document_format,
    starts_with_front_matter,
)
from citewall.ingest.documents.load import load_documents
from citewall.ingest.documents.markdown_sections import take_reply
from citewall.ingest.documents.sidecar import SIDECAR_SUFFIX
from citewall.kb.audiences import audience_names
from citewall.kb.card import Card
from citewall.kb.urls import url_problem

CARD_FIELDS = ("id", "title", "body", "url", "license", "reply", "audiences", "metadata")
#: A folder's audiences: every card under the folder (JSONL, Markdown, documents) that names
#: none of its own is for these groups (the nearest such file above a card wins).
FOLDER_AUDIENCES_FILE = "_audiences.yaml"


@dataclass(slots=True)
class LoadResult:
    """Valid cards (first occurrence of each id wins) and one error per refused card."""

    cards: list[Card] = field(default_factory=list)
    errors: list[IngestError] = field(default_factory=list)
    #: Ids of refused cards whose id could be read: pruning must not delete their old version.
    refused_ids: set[str] = field(default_factory=set)
    #: Errors for which no card id could be read (bad JSON line, unreadable file, missing path).
    unidentified: int = 0


def _card_from_mapping(raw: Any, *, path: str, line: int, lines: dict[str, int]) -> Card:
    """Validate one card; ``lines`` maps a field to its own line (front matter) if known."""
    card, problems = validate_card(raw, path=path, line=line, lines=lines)
    if card is None:
        raise problems[0]
    return card


def validate_card(
    raw: Any, *, path: str, line: int | None, lines: dict[str, int]
) -> tuple[Card | None, list[IngestError]]:
    """THE card validation of every ingest (files, folders, the admin pages' playbooks): the
    card, or None and every problem found, one ``IngestError`` per field (file, line, field).
    A file refuses the card with the first; a form shows each beside its field."""
    if not isinstance(raw, dict):
        error = IngestError(f"expected an object, got {type(raw).__name__}", path=path, line=line)
        return None, [error]
    unknown = sorted(set(raw) - set(CARD_FIELDS))
    if unknown:
        return None, [
            IngestError(
                f"unknown field; allowed fields are {', '.join(CARD_FIELDS)}",
                path=path,
                line=lines.get(name, line),
                field=name,
            )
            for name in unknown
        ]
    if raw.get("url") is not None:
        problem = url_problem(raw["url"])
        if problem:
            error = IngestError(
                f"unsafe url {raw['url']!r}: {problem}",
                path=path,
                line=lines.get("url", line),
                field="url",
            )
            return None, [error]
    try:
        return Card.model_validate(raw), []
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            name = ".".join(str(p) for p in err.get("loc", ())) or "card"
            top = name.split(".", 1)[0]
            value = raw.get(top, None)
            shown = f" (got {value!r:.80})" if top in raw else ""
            problems.append(
                IngestError(
                    f"{err.get('msg', 'invalid value')}{shown}",
                    path=path,
                    line=lines.get(top, line),
                    field=name,
                )
            )
        return None, problems


def load_jsonl(path: Path) -> LoadResult:
    """One card per non-blank line."""
    result = LoadResult()
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        result.errors.append(IngestError(f"cannot read file: {exc}", path=str(path)))
        result.unidentified += 1
        return result
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            result.errors.append(
                IngestError(
                    f"invalid JSON: {exc.msg} at column {exc.colno}", path=str(path), line=lineno
                )
            )
            result.unidentified += 1
            continue
        _add(result, raw, path=str(path), line=lineno, lines={})
    return result


def _front_matter(text: str) -> tuple[str, str, int]:
    """Split ``---`` front matter from the body; returns (yaml, body, the line of the body's
    first text)."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        raise IngestError("missing YAML front matter (the file must start with '---')", line=1)
    for i in range(1, len(lines)):
        if lines[i].strip() in {"---", "..."}:
            rest = lines[i + 1 :]
            blank = next((n for n, line in enumerate(rest) if line.strip()), 0)
            return "\n".join(lines[1:i]), "\n".join(rest).strip(), i + 2 + blank
    raise IngestError("unterminated YAML front matter (no closing '---')", line=1)


def _field_lines(front: str) -> dict[str, int]:
    """Top-level key -> line number in the file (front matter starts on line 2)."""
    out: dict[str, int] = {}
    for offset, line in enumerate(front.splitlines()):
        if line and not line[0].isspace() and ":" in line:
            out.setdefault(line.split(":", 1)[0].strip(), offset + 2)
    return out


def load_markdown(path: Path) -> LoadResult:
    """One card per file: YAML front matter (id, title, url, license, metadata) + body. A
    ``## Tell the member`` section of the body is the card's ``reply`` (``take_reply``)."""
    result = LoadResult()
    try:
        text = path.read_text(encoding="utf-8")
        front, body, body_line = _front_matter(text)
        raw = yaml.safe_load(front) if front.strip() else {}
    except IngestError as exc:
        result.errors.append(
            IngestError(str(exc).split(": ", 1)[-1], path=str(path), line=exc.line)
        )
        result.unidentified += 1
        return result
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 2 if mark is not None else 1
        result.errors.append(
            IngestError(f"invalid YAML front matter: {exc}", path=str(path), line=line)
        )
        result.unidentified += 1
        return result
    except (OSError, UnicodeDecodeError) as exc:
        result.errors.append(IngestError(f"cannot read file: {exc}", path=str(path)))
        result.unidentified += 1
        return result
    lines = _field_lines(front)
    if isinstance(raw, dict):
        if "body" in raw:
            result.errors.append(
                IngestError(
                    "body goes below the front matter, not in it",
                    path=str(path),
                    line=lines.get("body", 1),
                    field="body",
                )
            )
            result.refused_ids.add(str(raw.get("id")))
            return result
        split = take_reply(body)
        raw = {**raw, "body": split.body}
        lines["body"] = body_line
        if split.line is not None:
            where = body_line + split.line
            if "reply" in raw:
                result.errors.append(
                    IngestError(
                        "the reply is given twice: in the front matter "
                        f"(line {lines.get('reply', 1)}) and as a 'Tell the member' section; "
                        "keep one",
                        path=str(path),
                        line=where,
                        field="reply",
                    )
                )
                result.refused_ids.add(str(raw.get("id")))
                return result
            raw["reply"] = split.reply or ""  # an empty section is refused, not ignored
            lines["reply"] = where
    _add(result, raw, path=str(path), line=1, lines=lines)
    return result


def _add(result: LoadResult, raw: Any, *, path: str, line: int, lines: dict[str, int]) -> None:
    try:
        result.cards.append(_card_from_mapping(raw, path=path, line=line, lines=lines))
    except IngestError as exc:
        result.errors.append(exc)
        if isinstance(raw, dict) and isinstance(raw.get("id"), str):
            result.refused_ids.add(raw["id"])
        else:
            result.unidentified += 1


@dataclass(slots=True)
class _Found:
    """The files under one given path: card files (``md`` or ``jsonl``), documents, sidecars,
    and the folder document ids are relative to."""

    root: Path
    cards: list[tuple[Path, str]] = field(default_factory=list)
    documents: list[Path] = field(default_factory=list)
    sidecars: list[Path] = field(default_factory=list)


def _is_document(path: Path) -> bool:
    if document_format(path) is None:
        return False
    return path.suffix.lower() not in MARKDOWN_SUFFIXES or not starts_with_front_matter(path)


def _is_sidecar(path: Path) -> bool:
    name = path.name
    return (
        name.endswith(SIDECAR_SUFFIX)
        and document_format(Path(name[: -len(SIDECAR_SUFFIX)])) is not None
    )


def _find(path: Path) -> _Found:
    """What to load from ``path``: a folder is walked; a file is taken as its suffix says (any
    suffix but a document's or Markdown's is read as JSONL, as before documents existed)."""
    if not path.is_dir():
        found = _Found(root=path.parent)
        if _is_document(path):
            found.documents.append(path)
        else:
            found.cards.append(
                (path, "md" if path.suffix.lower() in MARKDOWN_SUFFIXES else "jsonl")
            )
        return found
    found = _Found(root=path)
    for f in sorted(path.rglob("*")):
        if not f.is_file():
            continue
        if _is_document(f):
            found.documents.append(f)
        elif f.suffix.lower() in MARKDOWN_SUFFIXES:
            found.cards.append((f, "md"))
        elif f.suffix.lower() == ".jsonl":
            found.cards.append((f, "jsonl"))
        elif _is_sidecar(f):
            found.sidecars.append(f)
    return found


def read_folder_audiences(file: Path) -> tuple[str, ...]:
    """The groups a ``_audiences.yaml`` names (``audiences: [enterprise, beta]``); an
    IngestError naming the file, the line and the field when it is unreadable or bad."""
    path = str(file)
    try:
        text = file.read_text(encoding="utf-8")
        raw = yaml.safe_load(text)
        node = yaml.compose(text)
    except (OSError, UnicodeDecodeError) as exc:
        raise IngestError(f"cannot read file: {exc}", path=path) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        raise IngestError(f"invalid YAML: {exc}", path=path, line=line) from None
    lines: dict[str, int] = {}
    if isinstance(node, yaml.MappingNode):
        lines = {str(k.value): k.start_mark.line + 1 for k, _ in node.value}
    if not isinstance(raw, dict) or set(raw) != {"audiences"}:
        extra = sorted(set(raw) - {"audiences"}) if isinstance(raw, dict) else []
        raise IngestError(
            "expected one field, audiences (a list of group names)",
            path=path,
            line=lines.get(str(extra[0]), 1) if extra else 1,
            field=str(extra[0]) if extra else "audiences",
        )
    try:
        names = audience_names(raw["audiences"])
    except ValueError as exc:
        raise IngestError(
            str(exc), path=path, line=lines.get("audiences"), field="audiences"
        ) from None
    if not names:
        raise IngestError(
            "names no group; delete the file to make the folder's cards for every member",
            path=path,
            line=lines.get("audiences"),
            field="audiences",
        )
    return names


@dataclass(slots=True)
class _FolderAudiences:
    """The folder files above the cards of one given path, read once each. A folder whose file
    is bad refuses its cards (they must not load for every member by mistake)."""

    root: Path
    read: dict[Path, tuple[str, ...] | IngestError | None] = field(default_factory=dict)

    def _of(self, folder: Path) -> tuple[str, ...] | IngestError | None:
        if folder not in self.read:
            file = folder / FOLDER_AUDIENCES_FILE
            try:
                self.read[folder] = read_folder_audiences(file) if file.is_file() else None
            except IngestError as exc:
                self.read[folder] = exc
        return self.read[folder]

    def above(self, file: Path) -> tuple[str, ...] | IngestError | None:
        """The nearest folder file's groups between ``file`` and the root (None: no file)."""
        folder = file.parent
        while True:
            found = self._of(folder)
            if found is not None or folder == self.root or folder.parent == folder:
                return found
            if self.root not in folder.parents:
                return None
            folder = folder.parent

    def apply(
        self, result: LoadResult, placed: Iterable[tuple[Card, str]]
    ) -> list[tuple[Card, str]]:
        """Each card with its folder's audiences when it names none of its own; the cards of
        a folder whose file is bad are refused (one error per file)."""
        kept: list[tuple[Card, str]] = []
        for card, where in placed:
            found = self.above(Path(where))
            if isinstance(found, IngestError):
                if not any(e is found for e in result.errors):
                    result.errors.append(found)
                result.refused_ids.add(card.id)
                continue
            if found and not card.audiences:
                card = card.model_copy(update={"audiences": found})
            kept.append((card, where))
        return kept


def _merge(
    result: LoadResult, placed: Iterable[tuple[Card, str]], first_seen: dict[str, str]
) -> None:
    """Add each (card, its file) to ``result``; an id seen before is refused, naming both."""
    for card, where in placed:
        if card.id in first_seen:
            result.errors.append(
                IngestError(
                    f"duplicate card id {card.id!r} (first seen in {first_seen[card.id]})",
                    path=where,
                    field="id",
                )
            )
            continue
        first_seen[card.id] = where
        result.cards.append(card)


def load_cards(
    paths: Sequence[Path | str], *, document_max_bytes: int = DEFAULT_DOCUMENT_MAX_BYTES
) -> LoadResult:
    """Load every card under ``paths`` (JSONL files, Markdown files, documents, folders of any).

    A missing path, an unreadable file or an invalid card is an error in the result; other
    cards still load. A card id seen twice is refused the second time (naming both places).
    A document file over ``document_max_bytes`` is refused before it is read.

    >>> load_cards([]).cards
    []
    """
    result = LoadResult()
    first_seen: dict[str, str] = {}
    for raw_path in paths:
        path = Path(raw_path)
        if not path.exists():
            result.errors.append(IngestError("no such file or directory", path=str(path)))
            result.unidentified += 1
            continue
        found = _find(path)
        folders = _FolderAudiences(found.root)
        for file, kind in found.cards:
            part = load_markdown(file) if kind == "md" else load_jsonl(file)
            result.errors.extend(part.errors)
            result.refused_ids |= part.refused_ids
            result.unidentified += part.unidentified
            placed = folders.apply(result, ((card, str(file)) for card in part.cards))
            _merge(result, placed, first_seen)
        if found.documents or found.sidecars:
            docs = load_documents(
                found.root, found.documents, max_bytes=document_max_bytes, sidecars=found.sidecars
            )
            result.errors.extend(docs.errors)
            result.unidentified += docs.unidentified
            where = ((card, str(found.root / card.metadata["path"])) for card in docs.cards)
            _merge(result, folders.apply(result, where), first_seen)
    return result
