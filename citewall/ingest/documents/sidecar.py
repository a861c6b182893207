"""A document's sidecar: ``guide.pdf.yaml`` beside ``guide.pdf``, naming what the file cannot.

A document is internal: nothing inside a PDF, a Word file or an HTML export (not even a
canonical link) can make it external. Only a sidecar can, with a ``url`` that passes
``url_problem``; a bad one refuses the document (file, line and field) rather than leaving it
silently internal. Fields: ``url``, ``license``, ``title`` (instead of the document's own),
``audiences`` (the groups every card of the document is for, ``kb.audiences``) and
``metadata`` (free internal fields, merged into every card of the document).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from citewall.errors import IngestError
from citewall.kb.audiences import audience_names
from citewall.kb.card import RESERVED_METADATA_KEYS
from citewall.kb.urls import url_problem

SIDECAR_SUFFIX = ".yaml"
SIDECAR_FIELDS = ("url", "license", "title", "audiences", "metadata")
#: Metadata keys citewall sets on every document card from the document itself.
DOCUMENT_METADATA_KEYS = frozenset({"path", "format", "section", "pages"})


@dataclass(frozen=True, slots=True)
class Sidecar:
    """A validated sidecar, with where each field was written (for later errors)."""

    path: str
    url: str | None = None
    license: str | None = None
    title: str | None = None
    audiences: tuple[str, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)


def sidecar_path(document: Path) -> Path:
    """Where ``document``'s sidecar is: its full file name plus ``.yaml``.

    >>> sidecar_path(Path("playbooks/guide.pdf")).as_posix()
    'playbooks/guide.pdf.yaml'
    """
    return document.with_name(document.name + SIDECAR_SUFFIX)


def _key_lines(text: str) -> dict[str, int]:
    """Top-level key -> its 1-based line, from the YAML node tree."""
    node = yaml.compose(text)
    if not isinstance(node, yaml.MappingNode):
        return {}
    return {
        str(key.value): key.start_mark.line + 1
        for key, _ in node.value
        if isinstance(key, yaml.ScalarNode)
    }


def _optional_text(raw: dict[str, Any], name: str, path: str, lines: dict[str, int]) -> str | None:
    value = raw.get(name)
    if value is None or (isinstance(value, str) and value.strip()):
        return value.strip() if isinstance(value, str) else None
    raise IngestError("must be a non-empty string", path=path, line=lines.get(name), field=name)


def read_sidecar(document: Path) -> Sidecar | None:
    """The sidecar of ``document``, None without one; an IngestError naming the sidecar's file,
    line and field when it is unreadable or a field is bad."""
    side = sidecar_path(document)
    if not side.is_file():
        return None
    path = str(side)
    try:
        text = side.read_text(encoding="utf-8")
        lines = _key_lines(text)
        raw = yaml.safe_load(text)
    except UnicodeDecodeError as exc:
        raise IngestError(f"not valid UTF-8 at byte {exc.start}", path=path) from None
    except OSError as exc:
        raise IngestError(f"cannot read file: {exc}", path=path) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        raise IngestError(f"invalid YAML: {exc}", path=path, line=line) from None
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise IngestError(f"expected a mapping, got {type(raw).__name__}", path=path, line=1)
    for key in raw:
        if key not in SIDECAR_FIELDS:
            raise IngestError(
                f"unknown field; allowed fields are {', '.join(SIDECAR_FIELDS)}",
                path=path,
                line=lines.get(str(key)),
                field=str(key),
            )
    url = raw.get("url")
    if url is not None and (problem := url_problem(url)):
        raise IngestError(
            f"unsafe url {url!r}: {problem}; the document is refused, not made internal",
            path=path,
            line=lines.get("url"),
            field="url",
        )
    metadata = raw.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise IngestError(
            "must be a mapping", path=path, line=lines.get("metadata"), field="metadata"
        )
    taken = sorted((RESERVED_METADATA_KEYS | DOCUMENT_METADATA_KEYS).intersection(metadata))
    if taken:
        raise IngestError(
            f"key(s) {', '.join(taken)} are set by citewall (url, license and title are "
            "sidecar fields of their own)",
            path=path,
            line=lines.get("metadata"),
            field=f"metadata.{taken[0]}",
        )
    try:
        audiences = audience_names(raw.get("audiences") or [])
    except ValueError as exc:
        raise IngestError(
            str(exc), path=path, line=lines.get("audiences"), field="audiences"
        ) from None
    return Sidecar(
        path=path,
        url=url,
        audiences=audiences,
        license=_optional_text(raw, "license", path, lines),
        title=_optional_text(raw, "title", path, lines),
        metadata=metadata,
        lines=lines,
    )
