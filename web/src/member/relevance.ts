/**
 * What the popover says about a source's relevance score. The score exists only when the
 * answer was reranked (`hybrid_path === "full"`); otherwise the UI says why it is missing
 * instead of showing a number derived from something else.
 */
import type { HybridPath } from "../api/types";

export type RelevanceView =
  { kind: "score"; score: number; label: string } | { kind: "hint"; label: string };

const PATH_WORDS: Record<string, string> = {
  rrf_only: "rrf_only (fused keyword and semantic search, not reranked)",
  dense_only: "dense_only (semantic search only)",
};

/** Decide how to present `score` for an answer retrieved along `path`. */
export function relevanceView(
  score: number | null | undefined,
  path: HybridPath | undefined,
): RelevanceView {
  if (typeof score === "number" && Number.isFinite(score)) {
    const clamped = Math.min(100, Math.max(0, Math.round(score)));
    return { kind: "score", score: clamped, label: `${clamped} / 100` };
  }
  if (path && path !== "full") {
    return {
      kind: "hint",
      label: `Relevance score shown only when answers are reranked; this answer used ${PATH_WORDS[path] ?? path}.`,
    };
  }
  if (path === "full") {
    return { kind: "hint", label: "No relevance score was recorded for this source." };
  }
  return { kind: "hint", label: "Relevance score shown only when answers are reranked." };
}
