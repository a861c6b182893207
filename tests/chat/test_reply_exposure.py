"""A reply is internal text: the verbatim cap and exposure accounting count copies of it."""

from __future__ import annotations

from citewall.chat.corpus_protection import CapCounter, VerbatimCap, measure_exposure
from citewall.retrieval.types import ContextChunk

REPLY = "A parcel that arrives late gets a goodwill credit on your next invoice from us."
PLAYBOOK = ContextChunk(id="pb-late", text="Log the credit in Helm with code GW-LATE.", reply=REPLY)


def test_copying_a_reply_counts_against_the_cap_and_as_exposure() -> None:
    counter = CapCounter(VerbatimCap(max_sentences=1, span_words=10), [PLAYBOOK])
    assert counter.copies(REPLY)
    assert counter.keep(REPLY) and not counter.keep(REPLY)
    (record,) = measure_exposure(f"{REPLY[:-1]} [1].", [PLAYBOOK], set(), 10)
    assert record.card_id == "pb-late" and len(record.sentences) == 1
    assert record.card_sentences == 2 and record.longest_span == len(REPLY.split())
