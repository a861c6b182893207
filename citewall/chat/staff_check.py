"""The staff-only post-check: answer sentences meant for staff never reach the member.

Whatever wrote the answer (the extractive generator quoting a playbook, a model paraphrasing
one), each sentence is judged whole by the staff-only detector (``boundary.staff_only``) and a
flagged one is removed, in the stream too (``chat.corpus_protection.SentenceGate`` releases a
sentence only once it is complete). An answer with nothing left becomes the pipeline's honest
"not found". The count removed is stored with the turn for admins (``REMOVED_KEY`` in its
timings).

A sentence that is, word for word, a sentence of a retrieved playbook's member-facing reply is
kept: its author wrote it for the member, so a code or name in it (a service code the member
must quote) is meant to be told. Anything else, paraphrase included, is judged.

The detector's per-KB vocabulary (names and codes of internal cards that no public card uses)
is derived from the card catalogue once per catalogue version
(``boundary.staff_vocabulary.StaffVocabularySource``), not per answer.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable

from citewall.boundary.staff_only import StaffVerdict, StaffVocabulary, judge
from citewall.citations.markers import strip_markers
from citewall.citations.outline import outline
from citewall.citations.verbatim import words

log = logging.getLogger("citewall.chat")

#: The key of the removed-sentence count in a stored turn's timings (admin view only).
REMOVED_KEY = "staff_only.removed"

Keep = Callable[[str], bool]


class StaffFilter:
    """Judges the sentences of one answer (stateful: one per answer); ``removed`` holds the
    verdicts of the sentences it refused."""

    def __init__(self, vocabulary: StaffVocabulary, replies: Iterable[str] = ()) -> None:
        self._vocabulary = vocabulary
        # The units of a reply an answer can quote, read as the generator reads them.
        self._approved = {words(u.text) for reply in replies for u in outline(reply).units}
        self.removed: list[StaffVerdict] = []

    def keep(self, sentence: str) -> bool:
        """Keep ``sentence`` (markers allowed)? False when the detector flags it, unless it is
        a sentence of one of the ``replies`` word for word."""
        text = strip_markers(sentence)
        if words(text) in self._approved:
            return True
        verdict = judge(text, self._vocabulary)
        if verdict.staff_only:
            self.removed.append(verdict)
            log.info("staff-only sentence removed (%s: %r)", verdict.reason, verdict.matched)
        return not verdict.staff_only


def keep_all(*checks: Keep | None) -> Keep | None:
    """One sentence check from several, applied in order (a refused sentence is not shown to
    the later ones); None when there is none.

    >>> keep_all(None, None) is None
    True
    >>> keep_all(lambda s: "x" not in s, None)("a x")
    False
    """
    active = [c for c in checks if c is not None]
    if not active:
        return None
    return lambda sentence: all(check(sentence) for check in active)
