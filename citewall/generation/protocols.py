"""The generator protocol: numbered context in, reply text with ``[n]`` markers out."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

from citewall.retrieval.types import ContextChunk


@dataclass(frozen=True, slots=True)
class Turn:
    """A previous turn of the conversation (content as stored, markers included)."""

    role: Literal["user", "assistant"]
    content: str


@dataclass(slots=True)
class GeneratedReply:
    text: str
    generator: str
    timings_ms: dict[str, float] = field(default_factory=dict)


@runtime_checkable
class Generator(Protocol):
    """``context[i]`` is shown to the model as ``[i+1]``."""

    name: str

    def generate(
        self, question: str, context: Sequence[ContextChunk], history: Sequence[Turn] = ()
    ) -> GeneratedReply: ...

    def stream(
        self, question: str, context: Sequence[ContextChunk], history: Sequence[Turn] = ()
    ) -> Iterator[str]:
        """Yield text deltas; their concatenation is the reply text."""
        ...
