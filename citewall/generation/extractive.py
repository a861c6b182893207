"""The embedded default generator: an extractive answerer that cites by construction.

Deterministic, no model download beyond the packaged embedder, no API key. It reads each
context card's outline (``citations.outline``: sections, tab labels, lists) and quotes whole
units only: a whole sentence or a whole list item, never a fragment. Units are scored against
the question (cosine similarity of MiniLM embeddings, the units' vectors read from what ingest
stored, plus lexical overlap of stemmed content words, with a small bonus for better-ranked
cards). An internal card is quoted only from its member-facing reply
(``ContextChunk.quotable_text``); without one it still ranks but adds nothing to the prose.
The answer is built around retrieval's order:

- The anchor is the best-ranked card with a relevant unit; the answer's first sentence is its.
- Within the anchor, the section that matches best (its units and its heading) is the one
  answered from; another section only when the question names its case (its heading's words),
  and one tab ("Desktop/Web", "Mobile") unless the question names another.
- A how-to question ("how do I...", "how to", "steps"), or one whose best unit is a step, gets
  the section's numbered steps (one list, of the tab), whole and in order (at most
  ``MAX_STEPS``), after one leading sentence when the card has a relevant one.
- Otherwise up to ``MAX_SENTENCES`` relevant units (MMR-style redundancy control); a
  lower-ranked card adds a unit only when it scores well, on its own and against the answer's
  first unit, and states a word of the question the answer so far lacks (``lower_card_adds``).

Safety by construction: a unit that contains a URL (or any ``scheme:`` link), a Markdown link
the outline kept, HTML, a card title or a card id is never used, so the answer cannot copy an
internal title into prose nor write a link. Markers already present in card text are stripped.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from citewall.citations.outline import Unit, outline, plain
from citewall.citations.verbatim import words
from citewall.generation.protocols import GeneratedReply, Turn
from citewall.retrieval.kb_embedder import sentence_embedder
from citewall.retrieval.protocols import Embedder
from citewall.retrieval.types import ContextChunk
from citewall.text.terms import WORD, content_terms

#: Sentences in an answer that is not a procedure, at most.
MAX_SENTENCES = 4
#: Steps of a procedure quoted, at most (a longer list is cut after this many).
MAX_STEPS = 8
#: MMR trade-off: relevance weight vs. redundancy with sentences already picked.
MMR_LAMBDA = 0.7
#: A further unit of the anchor card must score at least this fraction of the first one; a
#: unit of another card at least ``OTHER_CARD_FLOOR`` (tuned on the dev split for nugget
#: recall and the off-topic rate, docs/evaluation.md).
SAME_CARD_FLOOR = 0.3
OTHER_CARD_FLOOR = 1.2
#: And never below this absolute score: a weak anchor must not let a neighbour's unit in for
#: merely beating it. At 0.4, every lower-ranked unit that joined an answer on the three dev
#: splits scoring under 0.55 was off topic (8 of 8; docs/evaluation.md, "A lower-ranked card
#: adds a sentence only when it is relevant on its own").
OTHER_CARD_MIN = 0.55
#: A card is relevant when one of its units scores at least this (0.7 cosine + 0.3 lexical
#: overlap): below it, the next-ranked card anchors the answer. Low on purpose: retrieval
#: ranked the card first on its title and all its text, which a unit's score cannot see.
RELEVANT_FLOOR = 0.15
#: Weight of the heading's word match (Jaccard of content terms) when choosing a section.
HEADING_WEIGHT = 0.3
#: A picked unit this similar to an earlier pick is a near-duplicate and skipped.
DUPLICATE_SIM = 0.9
#: Candidates scored per answer (the cheapest lexical filter keeps latency bounded when a
#: unit's vector is not stored and must be embedded).
MAX_CANDIDATES = 48

NO_ANSWER = "The knowledge base has related material, but nothing in it answers this directly."

_URLISH = re.compile(
    r"(?i)\b[a-z][a-z0-9+.-]*://|\bwww\.|\b(?:javascript|data|vbscript|file|mailto):|"
    r"\]\(|<[a-z/!]|\b[a-z0-9-]+\.(?:com|org|net|io|dev|app|co|gov|edu)\b"
)
#: A sentence that leans on the one before it ("Finally, ...", "Also, ...", "This means ...",
#: "They receive ..."): fine inside an answer, meaningless as its first sentence.
_LEANS_BACK = re.compile(
    r"(?i)^(?:finally|also|however|then|next|otherwise|instead|besides|still|afterwards|"
    r"after that|in that case|in addition|additionally|moreover|furthermore|as a result|"
    r"this|that|these|those|it|its|they|their|them|such)\b"
)
#: A sentence announcing what follows it ("go through this checklist", "the following"): quoted
#: without what follows, it promises what the answer does not give.
_ANNOUNCES = re.compile(
    r"(?i)\b(?:this|these|the following)\s+(?:checklist|steps|list|instructions)\b|"
    r"\bthe following\b|\bas follows\b"
)
#: The citation markers that end each quoted unit of an answer ("... [1].", "... [1][3].").
_MARKERS = re.compile(r"\s*\[\d+\](?:\s*\[\d+\])*[.!?。！？]*")
_HOW_TO = re.compile(
    r"(?i)\bhow\s+(?:do|can|should|would|could|will)\s+(?:i|we|you|one|they|my)\b|"
    r"\bhow\s+to\b|\bsteps?\b|\bwalk\s+me\s+through\b"
)


def quotable_text(chunk: ContextChunk) -> str:
    """The text of ``chunk`` an answer may quote: an internal card's reply only
    (``ContextChunk.quotable_text``; its staff notes still rank it but never reach prose)."""
    return chunk.quotable_text


def opens_well(text: str) -> bool:
    """Whether a unit can be an answer's first sentence: it does not lean on a sentence before
    it.

    >>> opens_well("Finally, tell your customer the delivery time."), opens_well("Add a code.")
    (False, True)
    """
    return _LEANS_BACK.match(text) is None


def lower_card_adds(relevance: float, first: float, names_missing_term: bool) -> bool:
    """Whether a unit of a card ranked below the anchor may join the answer: it states a word
    of the question the answer lacks (``names_missing_term``), scores ``OTHER_CARD_FLOOR``
    times the answer's first unit (``first``), and is relevant on its own (``OTHER_CARD_MIN``)
    however weak the anchor is.

    >>> lower_card_adds(0.57, 0.47, True), lower_card_adds(0.51, 0.37, True)
    (True, False)
    >>> lower_card_adds(0.9, 0.5, False)
    False
    """
    return names_missing_term and relevance >= max(OTHER_CARD_FLOOR * first, OTHER_CARD_MIN)


def is_how_to(question: str) -> bool:
    """Whether ``question`` asks for a procedure.

    >>> is_how_to("How do I schedule a message?"), is_how_to("What does a plan cost?")
    (True, False)
    """
    return _HOW_TO.search(question) is not None


@dataclass(frozen=True, slots=True)
class Quote:
    """A unit of one context card (``chunk_index`` in the context) the answer may quote."""

    chunk_index: int
    unit: Unit
    #: Quoting it copies internal text (an internal card's unit of ``span_words``+ words).
    copies_internal: bool = False

    @property
    def text(self) -> str:
        return self.unit.text

    @property
    def order(self) -> tuple[int, int]:
        return (self.chunk_index, self.unit.position)


class ExtractiveGenerator:
    """Answers by quoting whole units of the context, each cited with ``[n]``.

    ``max_internal_sentences`` (None: no limit) caps the units quoted from internal cards
    that count as copies (``span_words`` words or more, the verbatim cap's rule in
    ``chat.corpus_protection``): the answer keeps the most relevant of them and fills up with other
    relevant units, rather than losing its tail to the cap afterwards.
    """

    name = "extractive"

    def __init__(
        self,
        embedder: Embedder,
        *,
        max_internal_sentences: int | None = None,
        span_words: int = 10,
    ) -> None:
        # Unit vectors come from ingest's store when the embedder has one (the server's).
        self._embedder = sentence_embedder(embedder)
        self._max_internal = max_internal_sentences if max_internal_sentences else None
        self._span_words = span_words

    # -- protocol ------------------------------------------------------------------------------
    def generate(
        self, question: str, context: Sequence[ContextChunk], history: Sequence[Turn] = ()
    ) -> GeneratedReply:
        """Compose the answer (deterministic for a given question and context)."""
        t0 = time.perf_counter()
        text = self.compose(question, context, history)
        return GeneratedReply(
            text=text,
            generator=self.name,
            timings_ms={"generate": (time.perf_counter() - t0) * 1000.0},
        )

    def stream(
        self, question: str, context: Sequence[ContextChunk], history: Sequence[Turn] = ()
    ) -> Iterator[str]:
        """Yield the answer word by word (with its trailing whitespace)."""
        text = self.compose(question, context, history)
        yield from re.findall(r"\s*\S+\s*", text) or [text]

    # -- the answerer --------------------------------------------------------------------------
    def compose(
        self, question: str, context: Sequence[ContextChunk], history: Sequence[Turn] = ()
    ) -> str:
        """The answer text with ``[n]`` markers; NO_ANSWER when no unit is usable."""
        quotes = self.select(question, context, history)
        if not quotes:
            return NO_ANSWER
        return " ".join(_cite(q.text, q.chunk_index + 1) for q in quotes)

    def select(
        self, question: str, context: Sequence[ContextChunk], history: Sequence[Turn] = ()
    ) -> list[Quote]:
        """The units the answer quotes, in the answer's order (empty: nothing usable).

        In a conversation, a unit an earlier answer already quoted is left out while the context
        has units not yet said: a follow-up gets what is new, not the previous answer again.
        """
        quotes = self._quotes(context)
        said = _said(history)
        if said and (fresh := [q for q in quotes if _key(q.text) not in said]):
            quotes = fresh
        if not quotes:
            return []
        q_terms = content_terms(question)
        lexical = [_overlap(q_terms, q.text) for q in quotes]
        scored = list(range(len(quotes)))
        if len(scored) > MAX_CANDIDATES:
            # The top card's units are all scored (the answer opens there), the rest by words.
            top = [i for i in scored if quotes[i].chunk_index == 0][:MAX_CANDIDATES]
            others = sorted(
                (i for i in scored if quotes[i].chunk_index != 0),
                key=lambda i: (-lexical[i], quotes[i].order),
            )
            scored = sorted(top + others[: max(0, MAX_CANDIDATES - len(top))])
        q_vec = np.asarray(self._embedder.embed_query(question), dtype=np.float32)
        vecs = np.asarray(
            self._embedder.embed_sentences([quotes[i].text for i in scored]), dtype=np.float32
        )
        relevance = {
            i: 0.7 * float(vecs[k] @ q_vec) + 0.3 * lexical[i] + 0.04 / (1 + quotes[i].chunk_index)
            for k, i in enumerate(scored)
        }
        vec_of = {i: vecs[k] for k, i in enumerate(scored)}
        return _Answer(quotes, relevance, vec_of, q_terms, self._max_internal).build(
            is_how_to(question)
        )

    def _quotes(self, context: Sequence[ContextChunk]) -> list[Quote]:
        """The usable units of the context, in reading order."""
        forbidden = _forbidden_strings(context)
        out: list[Quote] = []
        for ci, chunk in enumerate(context):
            for unit in outline(quotable_text(chunk)).units:
                if not _usable(unit):
                    continue
                lowered = unit.text.lower()
                if any(f in lowered for f in forbidden):
                    continue
                copies = not chunk.is_external and len(words(unit.text)) >= self._span_words
                out.append(Quote(ci, unit, copies))
        return out


class _Answer:
    """One answer's selection over scored quotes (``relevance`` holds the scored ones)."""

    def __init__(
        self,
        quotes: list[Quote],
        relevance: dict[int, float],
        vecs: dict[int, np.ndarray],
        q_terms: set[str],
        limit: int | None,
    ) -> None:
        self.quotes, self.relevance, self.vecs = quotes, relevance, vecs
        self.q_terms, self.limit = q_terms, limit

    def build(self, how_to: bool) -> list[Quote]:
        scored = sorted(self.relevance, key=lambda i: (-self.relevance[i], i))
        anchor = self._anchor(scored)
        mine = [i for i in range(len(self.quotes)) if self.quotes[i].chunk_index == anchor]
        section = self._section(mine)
        in_section = [i for i in mine if self.quotes[i].unit.section == section]
        tab = self._tab(in_section)
        ranked = [i for i in in_section if i in self.relevance]
        best = max(ranked, key=lambda i: (self.relevance[i], -i))
        how_to = how_to or self.quotes[best].unit.kind == "step"
        if how_to and (steps := self._steps(in_section, tab)):
            return self._procedure(mine, section, steps)
        return self._sentences(scored, anchor, section, tab)

    # -- where the answer comes from -------------------------------------------------------
    def _anchor(self, scored: list[int]) -> int:
        """The best-ranked card with a relevant unit (else the card of the best unit)."""
        relevant = [i for i in scored if self.relevance[i] >= RELEVANT_FLOOR]
        pool = relevant or scored
        return min(self.quotes[i].chunk_index for i in pool)

    def _section(self, mine: list[int]) -> int:
        """The anchor's section whose units and heading match the question best."""
        best: dict[int, float] = {}
        for i in mine:
            if i in self.relevance:
                s = self.quotes[i].unit.section
                best[s] = max(best.get(s, -np.inf), self.relevance[i])
        headings = {self.quotes[i].unit.section: self.quotes[i].unit.heading for i in mine}
        return max(
            best,
            key=lambda s: (best[s] + HEADING_WEIGHT * _jaccard(self.q_terms, headings[s]), -s),
        )

    def _tab(self, in_section: list[int]) -> str | None:
        """The tab the question names, else the tab of the section's best-scoring unit."""
        tabs = list(dict.fromkeys(self.quotes[i].unit.tab for i in in_section))
        named = [t for t in tabs if t and self.q_terms & content_terms(t)]
        if named:
            return named[0]
        ranked = [i for i in in_section if i in self.relevance]
        return self.quotes[max(ranked, key=lambda i: (self.relevance[i], -i))].unit.tab

    def _names(self, heading: str) -> bool:
        """Whether the question names a section's case: every word of its heading."""
        terms = content_terms(heading)
        return bool(terms) and terms <= self.q_terms

    def _allowed(self, i: int, anchor: int, section: int, tab: str | None) -> bool:
        unit = self.quotes[i].unit
        if self.quotes[i].chunk_index != anchor:
            return True
        if unit.section not in (section, 0) and not self._names(unit.heading):
            return False
        return unit.section != section or unit.tab in (tab, None)

    # -- procedures ------------------------------------------------------------------------
    def _steps(self, in_section: list[int], tab: str | None) -> list[int]:
        """The section's list (in the tab) holding its best-scoring item, in order."""
        items = [i for i in in_section if self.quotes[i].unit.kind == "step"]
        if not items:
            return []
        # The tab's lists; under no tab (a sentence before the labels), the first tab's.
        tab = tab if any(self.quotes[i].unit.tab == tab for i in items) else None
        tab = tab or self.quotes[items[0]].unit.tab
        items = [i for i in items if self.quotes[i].unit.tab == tab]
        ranked = [i for i in items if i in self.relevance]
        lead = max(ranked, key=lambda i: self.relevance[i]) if ranked else items[0]
        chosen = self.quotes[lead].unit.list_index
        steps = [i for i in items if self.quotes[i].unit.list_index == chosen]
        out: list[int] = []
        for i in steps[:MAX_STEPS]:
            if self.quotes[i].copies_internal and not self._room(out):
                break  # a procedure stops rather than skip a step
            out.append(i)
        return out

    def _procedure(self, mine: list[int], section: int, steps: list[int]) -> list[Quote]:
        """One leading sentence of the anchor (its section or intro, before the list), then the
        steps."""
        first = self.quotes[steps[0]].unit.position
        leads = [
            i
            for i in mine
            if i in self.relevance
            and self.quotes[i].unit.kind == "sentence"
            and self.quotes[i].unit.section in (section, 0)
            and self.quotes[i].unit.position < first
            and self.relevance[i] >= RELEVANT_FLOOR
            and (not self.quotes[i].copies_internal or self._room(steps))
        ]
        leads = [i for i in leads if opens_well(self.quotes[i].text)]
        head = [max(leads, key=lambda i: (self.relevance[i], -i))] if leads else []
        return [self.quotes[i] for i in [*head, *steps]]

    # -- other questions -------------------------------------------------------------------
    def _sentences(
        self, scored: list[int], anchor: int, section: int, tab: str | None
    ) -> list[Quote]:
        """The anchor section's best unit first; more relevant units of the allowed parts of
        the anchor; another card's only for a question word the answer lacks."""
        candidates = [
            i
            for i in scored
            if self.quotes[i].chunk_index == anchor
            and self.quotes[i].unit.section == section
            and self._allowed(i, anchor, section, tab)
        ]
        # The best unit that reads as a first sentence ("Finally, ..." does not).
        first = next((i for i in candidates if opens_well(self.quotes[i].text)), candidates[0])
        picked = [first]
        best = max(self.relevance[first], 1e-6)
        while len(picked) < MAX_SENTENCES:
            chosen: int | None = None
            chosen_score = -np.inf
            covered = set().union(*(content_terms(self.quotes[j].text) for j in picked))
            texts = {self.quotes[j].text.lower() for j in picked}
            for i in scored:
                q = self.quotes[i]
                if (
                    i in picked
                    or q.text.lower() in texts
                    or not self._allowed(i, anchor, section, tab)
                ):
                    continue
                if q.copies_internal and not self._room(picked):
                    continue
                if q.chunk_index == anchor:
                    if self.relevance[i] < SAME_CARD_FLOOR * best:
                        continue
                elif not lower_card_adds(
                    self.relevance[i], best, bool((self.q_terms - covered) & content_terms(q.text))
                ):
                    continue
                redundancy = max(float(self.vecs[j] @ self.vecs[i]) for j in picked)
                if redundancy >= DUPLICATE_SIM:
                    continue
                score = MMR_LAMBDA * self.relevance[i] - (1 - MMR_LAMBDA) * redundancy
                if score > chosen_score:
                    chosen, chosen_score = i, score
            if chosen is None:
                break
            picked.append(chosen)
        rest = sorted(picked[1:], key=lambda i: self.quotes[i].order)
        return [self.quotes[i] for i in [first, *rest]]

    def _room(self, picked: list[int]) -> bool:
        return (
            self.limit is None or sum(self.quotes[j].copies_internal for j in picked) < self.limit
        )


def _key(text: str) -> str:
    """A unit's text as compared with what was said: lower case, one space, no end mark."""
    return " ".join(text.lower().split()).rstrip(" .!?;:,")


def _said(history: Sequence[Turn]) -> set[str]:
    """What the assistant said in ``history``: each quoted unit (the text before each ``[n]``
    marker) as ``_key``, so a short unit ("Save.") is said only when it was said whole.

    >>> sorted(_said([Turn("assistant", "Save the **codes** [1]. Save [1][2].")]))
    ['save', 'save the codes']
    """
    out: set[str] = set()
    for turn in history:
        if turn.role == "assistant":
            for piece in _MARKERS.split(turn.content):
                if key := _key(plain(piece)):
                    out.add(key)
    return out


def _overlap(q_terms: set[str], text: str) -> float:
    """Share of the question's content words the unit contains."""
    if not q_terms:
        return 0.0
    return len(q_terms & content_terms(text)) / len(q_terms)


def _jaccard(q_terms: set[str], heading: str) -> float:
    h = content_terms(heading)
    return len(q_terms & h) / len(q_terms | h) if h and q_terms else 0.0


def _usable(unit: Unit) -> bool:
    """A unit an answer may quote: no link or HTML; a sentence or bullet of four words or more,
    a step of two ("Write a message." is a whole step). A sentence ending in a colon only
    introduces what follows ("The call providers supported are:"): alone it says nothing; so
    does one that announces it ("go through this checklist")."""
    if unit.kind != "step" and (unit.text.endswith(":") or _ANNOUNCES.search(unit.text)):
        return False
    least = 2 if unit.kind == "step" else 4
    return not _URLISH.search(unit.text) and len(WORD.findall(unit.text)) >= least


def _forbidden_strings(context: Sequence[ContextChunk]) -> set[str]:
    """Lower-cased strings an answer must not contain: internal titles, ids and their codes.

    An internal card's whole title is forbidden when it is distinctive (two words or more, or
    12+ characters; a one-word title such as "Refunds" is an ordinary word). A public card's
    title is public (its source chip shows it), and help articles repeat it in their steps
    ("click the pencil icon to change your email address"). Distinctive tokens are forbidden on
    their own too, so a code that identifies a card cannot reach the prose: of an id, 6+
    characters with a digit or an inner dash/underscore; of a title, 6+ characters with a
    digit or an underscore. A title's hyphenated word ("Two-step verification", "Sign-in") is
    ordinary language, and forbidding it would silence the very card that answers.
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
            if not chunk.is_external and (len(title.split()) >= 2 or len(title) >= 12):
                out.add(title)
            out.update(_distinctive_tokens(title, joiners="_"))
        if isinstance(chunk.id, str) and chunk.id:
            ident = chunk.id.lower()
            if len(ident) >= 8 or re.search(r"[-_.]", ident):
                out.add(ident)
            out.update(_distinctive_tokens(ident, joiners="-_"))
    return out


def _distinctive_tokens(text: str, *, joiners: str) -> set[str]:
    """Tokens of 6+ characters holding a digit, or a letter joined by one of ``joiners``.

    >>> sorted(_distinctive_tokens("two-step verification cwleakt-5p2nx5", joiners="_"))
    ['cwleakt-5p2nx5']
    >>> sorted(_distinctive_tokens("pb-accounts-2fa", joiners="-_"))
    ['pb-accounts-2fa']
    """
    joined = re.compile(rf"[a-z][{re.escape(joiners)}][a-z0-9]")
    return {
        tok
        for tok in re.findall(r"[a-z0-9][a-z0-9_-]*[a-z0-9]", text)
        if len(tok) >= 6 and (re.search(r"[0-9]", tok) or joined.search(tok))
    }


def _cite(sentence: str, n: int) -> str:
    """``Refunds take 5 days.`` -> ``Refunds take 5 days [1].``"""
    m = re.search(r"([.!?。！？]+[\"'”’)]*)$", sentence)
    if m:
        return f"{sentence[: m.start()].rstrip()} [{n}]{m.group(1)}"
    return f"{sentence.rstrip(' ,;:')} [{n}]."
