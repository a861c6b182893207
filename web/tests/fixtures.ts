/** Builders of wire values for the tests: a complete value, with the fields a test cares about. */
import type { RetrievalEvent } from "../src/api/types";

/** A retrieval event of a `full` turn (every stage ran), changed by `change`. */
export function retrievalEvent(change: Partial<RetrievalEvent> = {}): RetrievalEvent {
  return {
    id: 1,
    message_id: "m2",
    conversation_id: "c1",
    card_id: "help-refunds",
    final_rank: 1,
    dense_rank: 1,
    dense_score: 0.71,
    bm25_rank: 2,
    bm25_score: 7.5,
    rrf_rank: 1,
    rrf_score: 0.032,
    rerank_rank: 1,
    rerank_logit: 2.4,
    hybrid_path: "full",
    cited: true,
    is_external: true,
    query: "refund window",
    created_at: "2026-11-30T12:00:00Z",
    ...change,
  };
}
