"""The embedded default generator: an extractive answerer that cites by construction.

Deterministic, no model download beyond the packaged embedder, no API key. It splits the
context cards into sentence units, scores each against the question (cosine similarity of
MiniLM embeddings, the units' vectors read from what ingest stored, plus lexical overlap of
stemmed content words, with a small bonus for better-ranked cards), then answers from the
retriever's best card: its best sentence first, up to three more of its relevant sentences,
another card's only when it is as relevant as the best (MMR-style redundancy control
throughout), each cited with ``[n]``. An internal card is quoted only from its member-facing
reply (``ContextChunk.quotable_text``); without one it still ranks but adds nothing to the prose.

Safety by construction: a sentence that contains a URL (or any ``scheme:`` link), a Markdown
link, HTML, a card title or a card id is never used, so the answer cannot copy an internal
title into prose nor write a link. Markers already present in card text are stripped.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from citewall.citations.sentences import split_sentences
from citewall.citations.units import unit_text
from citewall.citations.verbatim import words
from citewall.generation.protocols import GeneratedReply, Turn
from citewall.retrieval.kb_embedder import sentence_embedder
from citewall.retrieval.protocols import Embedder
from citewall.retrieval.types import ContextChunk
from citewall.text.terms import WORD, content_terms

#: Sentences in an answer, at most.
MAX_SENTENCES = 4
#: MMR trade-off: relevance weight vs. redundancy with sentences already picked.
MMR_LAMBDA = 0.7
#: A further sentence of the best sentence's card must score at least this fraction of the
#: best one; a sentence of another card at least ``OTHER_CARD_FLOOR`` (tuned on the dev split
#: for nugget recall and the off-topic rate, docs/evaluation.md).
SAME_CARD_FLOOR = 0.3
#: The anchor is the best-ranked card, unless another card's best sentence scores at least
#: this multiple of the best-ranked card's best sentence.
ANCHOR_MARGIN = 1.4
OTHER_CARD_FLOOR = 1.2
#: A picked sentence this similar to an earlier pick is a near-duplicate and skipped.
DUPLICATE_SIM = 0.9
#: Candidates scored per answer (the cheapest lexical filter keeps latency bounded when a
#: sentence vector is not stored and must be embedded).
MAX_CANDIDATES = 48

NO_ANSWER = "The knowledge base has related material, but nothing in it answers this directly."

_URLISH = re.compile(
    r"(?i)\b[a-z][a-z0-9+.-]*://|\bwww\.|\b(?:javascript|data|vbscript|file|mailto):|"
    r"\]\(|<[a-z/!]|\b[a-z0-9-]+\.(?:com|org|net|io|dev|app|co|gov|edu)\b"
)


@dataclass(frozen=True, slots=True)
class _Candidate:
    chunk_index: int
    position: int
    text: str
    #: Quoting it copies internal text (an internal card's sentence of ``span_words``+ words).
    copies_internal: bool = False


class ExtractiveGenerator:
    """Answers by quoting the best sentences of the context, each cited with ``[n]``.

    ``max_internal_sentences`` (None: no limit) caps the sentences quoted from internal cards
    that count as copies (``span_words`` words or more, the verbatim cap's rule in
    ``chat.exposure``): the answer keeps the most relevant of them and fills up with other
    relevant sentences, rather than losing its tail to the cap afterwards.
    """

    name = "extractive"

    def __init__(
        self,
        embedder: Embedder,
        *,
        max_internal_sentences: int | None = None,
        span_words: int = 10,
    ) -> None:
        # Sentence vectors come from ingest's store when the embedder has one (the server's).
        self._embedder = sentence_embedder(embedder)
        self._max_internal = max_internal_sentences
        self._span_words = span_words

    # -- protocol ------------------------------------------------------------------------------
    def generate(
        self, question: str, context: Sequence[ContextChunk], history: Sequence[Turn] = ()
    ) -> GeneratedReply:
        """Compose the answer (deterministic for a given question and context)."""
        t0 = time.perf_counter()
        text = self.compose(question, context)
        return GeneratedReply(
            text=text,
            generator=self.name,
            timings_ms={"generate": (time.perf_counter() - t0) * 1000.0},
        )

    def stream(
        self, question: str, context: Sequence[ContextChunk], history: Sequence[Turn] = ()
    ) -> Iterator[str]:
        """Yield the answer word by word (with its trailing whitespace)."""
        text = self.compose(question, context)
        yield from re.findall(r"\s*\S+\s*", text) or [text]

    # -- the answerer --------------------------------------------------------------------------
    def compose(self, question: str, context: Sequence[ContextChunk]) -> str:
        """The answer text with ``[n]`` markers; NO_ANSWER when no sentence is usable."""
        candidates = self._candidates(context)
        if not candidates:
            return NO_ANSWER
        q_terms = content_terms(question)
        lexical = np.array([self._overlap(q_terms, c.text) for c in candidates], dtype=np.float32)
        if len(candidates) > MAX_CANDIDATES:
            keep = sorted(
                range(len(candidates)),
                key=lambda i: (-lexical[i], candidates[i].chunk_index, candidates[i].position),
            )[:MAX_CANDIDATES]
            keep.sort()
            candidates = [candidates[i] for i in keep]
            lexical = lexical[keep]
        q_vec = np.asarray(self._embedder.embed_query(question), dtype=np.float32)
        s_vecs = np.asarray(
            self._embedder.embed_sentences([c.text for c in candidates]), dtype=np.float32
        )
        dense = s_vecs @ q_vec
        prior = np.array([0.04 / (1 + c.chunk_index) for c in candidates], dtype=np.float32)
        relevance = 0.7 * dense + 0.3 * lexical + prior
        picked = self._select(
            relevance,
            s_vecs,
            [c.chunk_index for c in candidates],
            [c.copies_internal for c in candidates],
        )
        # Best sentence first, the rest in reading order (card rank, then position in card).
        first, rest = (
            picked[0],
            sorted(picked[1:], key=lambda i: (candidates[i].chunk_index, candidates[i].position)),
        )
        return " ".join(
            _cite(candidates[i].text, candidates[i].chunk_index + 1) for i in [first, *rest]
        )

    def _select(
        self,
        relevance: np.ndarray,
        vecs: np.ndarray,
        cards: Sequence[int],
        copies: Sequence[bool],
    ) -> list[int]:
        """Answer from the card that answers: the retriever's best card (the best-ranked card
        with a usable sentence) is the anchor. Its best sentence comes first; more of its
        sentences follow while they stay relevant (at least ``SAME_CARD_FLOOR`` of that best);
        another card's sentence only when it scores at least ``OTHER_CARD_FLOOR`` of it (a
        second part of the question the anchor does not cover). Near-duplicates are skipped;
        MMR orders the candidates; copies of internal text stop at ``max_internal_sentences``."""
        limit = self._max_internal
        if limit is not None and limit <= 0:
            limit = None
        order = sorted(range(len(relevance)), key=lambda i: (-float(relevance[i]), i))
        top = min(cards)
        first = next(i for i in order if cards[i] == top)
        # Floors are fractions of the best: measured from a positive best (cosine can be < 0).
        if float(relevance[order[0]]) >= ANCHOR_MARGIN * max(float(relevance[first]), 1e-6):
            first = order[0]  # another card's sentence answers clearly better
        anchor = cards[first]
        picked = [first]
        best = max(float(relevance[first]), 1e-6)
        while len(picked) < MAX_SENTENCES:
            chosen: int | None = None
            chosen_score = -np.inf
            room = limit is None or sum(copies[j] for j in picked) < limit
            for i in order:
                if i in picked or (copies[i] and not room):
                    continue
                floor = SAME_CARD_FLOOR if cards[i] == anchor else OTHER_CARD_FLOOR
                if float(relevance[i]) < floor * best:
                    continue
                redundancy = float(np.max(vecs[picked] @ vecs[i]))
                if redundancy >= DUPLICATE_SIM:
                    continue
                score = MMR_LAMBDA * float(relevance[i]) - (1 - MMR_LAMBDA) * redundancy
                if score > chosen_score:
                    chosen, chosen_score = i, score
            if chosen is None:
                break
            picked.append(chosen)
        return picked

    def _candidates(self, context: Sequence[ContextChunk]) -> list[_Candidate]:
        forbidden = _forbidden_strings(context)
        out: list[_Candidate] = []
        seen: set[str] = set()
        for ci, chunk in enumerate(context):
            # An internal card is quoted only from its reply: its staff notes never reach prose.
            for pos, raw in enumerate(split_sentences(chunk.quotable_text)):
                sentence = _clean(raw)
                if sentence is None or sentence.lower() in seen:
                    continue
                lowered = sentence.lower()
                if any(f in lowered for f in forbidden):
                    continue
                seen.add(lowered)
                copies = not chunk.is_external and len(words(sentence)) >= self._span_words
                out.append(_Candidate(ci, pos, sentence, copies))
        return out

    def _overlap(self, q_terms: set[str], sentence: str) -> float:
        """Share of the question's content words the sentence contains."""
        if not q_terms:
            return 0.0
        return len(q_terms & content_terms(sentence)) / len(q_terms)


def _forbidden_strings(context: Sequence[ContextChunk]) -> set[str]:
    """Lower-cased strings an answer must not contain: titles, ids and their codes.

    A whole title is forbidden when it is distinctive (two words or more, or 12+ characters;
    a one-word title such as "Refunds" is an ordinary word). Distinctive tokens of titles and
    ids (6+ characters with a digit, or with an inner dash/underscore) are forbidden on their
    own too, so a code that identifies an internal card cannot reach the prose.
    """
    out: set[str] = set()
    for chunk in context:
        titles: list[object] = [chunk.title]
        if isinstance(chunk.metadata, dict):
            titles.append(chunk.metadata.get("title"))
        for value in titles:
            if not isinstance(value, str):
                continue
            title = value.strip().lower()
            if len(title.split()) >= 2 or len(title) >= 12:
                out.add(title)
            out.update(_distinctive_tokens(title))
        if isinstance(chunk.id, str) and chunk.id:
            ident = chunk.id.lower()
            if len(ident) >= 8 or re.search(r"[-_.]", ident):
                out.add(ident)
            out.update(_distinctive_tokens(ident))
    return out


def _distinctive_tokens(text: str) -> set[str]:
    return {
        tok
        for tok in re.findall(r"[a-z0-9][a-z0-9_-]*[a-z0-9]", text)
        if len(tok) >= 6 and (re.search(r"[0-9]", tok) or re.search(r"[a-z][-_][a-z0-9]", tok))
    }


def _clean(sentence: str) -> str | None:
    """A usable prose sentence, or None (headings, code, tables, links, fragments)."""
    s = sentence.strip()
    if not s or s.startswith(("#", "```", "~~~", "|", ">")):
        return None
    if _URLISH.search(s) or "`" in s:
        return None
    s = unit_text(s)  # without bullet, markers and emphasis: the unit ingest embedded
    if len(WORD.findall(s)) < 4:
        return None
    return s


def _cite(sentence: str, n: int) -> str:
    """``Refunds take 5 days.`` -> ``Refunds take 5 days [1].``"""
    m = re.search(r"([.!?。！？]+[\"'”’)]*)$", sentence)
    if m:
        return f"{sentence[: m.start()].rstrip()} [{n}]{m.group(1)}"
    return f"{sentence.rstrip(' ,;:')} [{n}]."
