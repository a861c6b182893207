/**
 * What the popover says about a source's relevance score. The score exists only when the
 * answer was reranked (`hybrid_path === "full"`); otherwise the UI says why it is missing
 * instead of showing a number derived from something else. Members read it in plain words;
 * admins also see the retrieval path's name, as the admin pages show it.
 */
import type { HybridPath } from "../api/types";

export type RelevanceView =
  { kind: "score"; score: number; label: string } | { kind: "hint"; label: string };

export type Audience = "member" | "admin";

const UNRANKED = "No relevance score for this answer: its sources were";
const PATH_WORDS: Record<string, string> = {
  rrf_only: `${UNRANKED} found by a quick keyword and meaning search, not ranked in detail.`,
  dense_only: `${UNRANKED} found by a quick meaning search, not ranked in detail.`,
};

/** Decide how to present `score` for an answer retrieved along `path`. */
export function relevanceView(
  score: number | null | undefined,
  path: HybridPath | undefined,
  audience: Audience = "member",
): RelevanceView {
  if (typeof score === "number" && Number.isFinite(score)) {
    const clamped = Math.min(100, Math.max(0, Math.round(score)));
    return { kind: "score", score: clamped, label: `${clamped} / 100` };
  }
  if (path === "full") {
    return { kind: "hint", label: "No relevance score was recorded for this source." };
  }
  const words = (path && PATH_WORDS[path]) ?? `${UNRANKED} not ranked in detail.`;
  const label = audience === "admin" ? `${words} Retrieval path: ${path ?? "none"}.` : words;
  return { kind: "hint", label };
}
