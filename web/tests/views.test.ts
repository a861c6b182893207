import { describe, expect, it } from "vitest";

import type { EntryPerformance, Source } from "../src/api/types";
import { sinceFor } from "../src/components/LookbackSelect";
import { totalsByCard, totalsByPeriod } from "../src/admin/performance";
import { errorDetail } from "../src/api/client";
import { linkableSources } from "../src/member/SourcesPanel";
import { relevanceView } from "../src/member/relevance";
import { parseRoute } from "../src/router";

describe("relevanceView", () => {
  it("shows a score when there is one", () => {
    expect(relevanceView(87.4, "full")).toEqual({ kind: "score", score: 87, label: "87 / 100" });
    expect(relevanceView(0, "full")).toMatchObject({ kind: "score", score: 0 });
    expect(relevanceView(140, "full")).toMatchObject({ score: 100 });
  });

  it("explains a missing score on non-reranked paths in plain words to members", () => {
    const v = relevanceView(null, "rrf_only");
    expect(v).toEqual({
      kind: "hint",
      label:
        "No relevance score for this answer: its sources were found by a quick keyword and " +
        "meaning search, not ranked in detail.",
    });
    for (const path of ["rrf_only", "dense_only", null] as const) {
      const label = relevanceView(undefined, path).label;
      expect(label).not.toMatch(/rrf|dense|rerank|hybrid|path/i);
    }
  });

  it("keeps the retrieval path's name for admins", () => {
    expect(relevanceView(null, "rrf_only", "admin").label).toContain("Retrieval path: rrf_only.");
    expect(relevanceView(null, "dense_only", "admin").label).toContain("dense_only");
    expect(relevanceView(null, null, "admin").label).toContain("Retrieval path: none.");
    expect(relevanceView(50, "full", "admin")).toMatchObject({ kind: "score", score: 50 });
  });

  it("says so when a reranked answer has no score for a source", () => {
    expect(relevanceView(null, "full")).toEqual({
      kind: "hint",
      label: "No relevance score was recorded for this source.",
    });
    expect(relevanceView(Number.NaN, null).kind).toBe("hint");
  });
});

describe("linkableSources", () => {
  const src = (url: string): Source => ({
    card_id: url,
    title: "t",
    url,
    excerpt: "",
    metadata: {},
  });
  it("keeps only sources whose URL passes safeHttpUrl", () => {
    const shown = linkableSources([
      src("https://ok.example/a"),
      src("javascript:alert(1)"),
      src(""),
      src("//evil.example"),
      src("http://ok.example/b"),
    ]);
    expect(shown.map((s) => s.href)).toEqual(["https://ok.example/a", "http://ok.example/b"]);
  });
});

describe("entry-performance roll-ups", () => {
  const row = (
    card_id: string,
    period_start: string,
    r: number,
    c: number,
    rank = 2,
  ): EntryPerformance => ({
    card_id,
    period_start,
    times_retrieved: r,
    times_cited: c,
    cite_rate: r ? c / r : null,
    mean_rank: rank,
    last_cited: c ? `${period_start}T12:00:00Z` : null,
    is_external: card_id.startsWith("ext"),
    helpful: 0,
    unhelpful: 0,
    helpful_rate: null,
    handoffs: 0,
    audiences: [],
  });
  const rows = [
    row("ext-a", "2026-01-01", 4, 2, 1),
    row("ext-a", "2026-01-02", 6, 0, 3),
    row("int-b", "2026-01-01", 10, 5),
    row("ext-c", "2026-01-02", 0, 0),
  ];

  it("totals per card, busiest first, with exact cite rates and weighted mean rank", () => {
    const cards = totalsByCard(rows);
    expect(cards.map((c) => c.card_id)).toEqual(["int-b", "ext-a", "ext-c"]);
    const a = cards[1];
    expect(a).toMatchObject({
      times_retrieved: 10,
      times_cited: 2,
      cite_rate: 0.2,
      is_external: true,
    });
    expect(a?.mean_rank).toBeCloseTo((1 * 4 + 3 * 6) / 10);
    expect(a?.last_cited).toBe("2026-01-01T12:00:00Z");
    expect(cards[2]?.cite_rate).toBeNull();
  });

  it("totals per period, oldest first", () => {
    expect(totalsByPeriod(rows)).toEqual([
      { period_start: "2026-01-01", times_retrieved: 14, times_cited: 7, cite_rate: 0.5 },
      { period_start: "2026-01-02", times_retrieved: 6, times_cited: 0, cite_rate: 0 },
    ]);
  });
});

describe("parseRoute", () => {
  it.each([
    ["/", { name: "chat", conversationId: null }],
    ["/c/abc", { name: "chat", conversationId: "abc" }],
    ["/admin", { name: "admin-conversations" }],
    ["/admin/conversations/x1", { name: "admin-conversation", id: "x1" }],
    ["/admin/cards", { name: "admin-cards" }],
    ["/admin/analytics", { name: "admin-analytics" }],
    ["/admin/events", { name: "admin-events" }],
    ["/admin/gaps", { name: "admin-gaps" }],
    ["/nope", { name: "not-found" }],
  ])("%s", (path, route) => {
    expect(parseRoute(path)).toEqual(route);
  });
});

describe("small view logic", () => {
  it("computes look-back windows", () => {
    const now = new Date("2026-03-10T00:00:00Z");
    expect(sinceFor("all", now)).toBeUndefined();
    expect(sinceFor("day", now)).toBe("2026-03-09T00:00:00.000Z");
    expect(sinceFor("week", now)).toBe("2026-03-03T00:00:00.000Z");
  });

  it("reads FastAPI error bodies", () => {
    expect(errorDetail({ detail: "bad token" }, 401)).toBe("bad token");
    expect(errorDetail({ detail: [{ msg: "too long" }, { msg: "empty" }] }, 422)).toBe(
      "too long; empty",
    );
    expect(errorDetail(null, 502)).toBe("request failed (HTTP 502)");
  });
});
