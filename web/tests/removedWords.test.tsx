/**
 * Questions whose words retention removed or an erasure took: the gaps and feedback pages name
 * what happened ("removed under retention", "erased") instead of a blank row, and a removed
 * question is not offered as a test question.
 */
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";

import { FeedbackReportView } from "../src/admin/AdminFeedback";
import { GapsReport } from "../src/admin/AdminGaps";
import type { FeedbackReport, KnowledgeGapQuestion, KnowledgeGapReport } from "../src/api/types";

function example(change: Partial<KnowledgeGapQuestion>): KnowledgeGapQuestion {
  return {
    message_id: "m1",
    conversation_id: "c1",
    question: "",
    answer_status: "not_found",
    support: null,
    asked_at: "2026-03-10T10:00:00Z",
    reason: "not_found",
    coverage: null,
    rating: null,
    ...change,
  };
}

const gaps = (examples: KnowledgeGapQuestion[]): KnowledgeGapReport => ({
  period: "week",
  since: null,
  until: null,
  min_coverage: 0.7,
  low_support_below: 0.5,
  questions: examples.length,
  truncated: false,
  groups: [
    {
      question: examples[0]?.question ?? "",
      count: examples.length,
      not_found: examples.length,
      low_coverage: 0,
      rated_down: 0,
      low_support: 0,
      last_asked: "2026-03-10T10:00:00Z",
      per_period: [{ period_start: "2026-03-09", count: examples.length }],
      examples,
    },
  ],
  answered_badly_questions: 0,
  answered_badly: [],
});

describe("removed questions", () => {
  it("are named on the gaps page for what removed them", () => {
    const html = renderToStaticMarkup(
      <GapsReport
        report={gaps([
          example({ removed: "retention" }),
          example({ message_id: "m2", conversation_id: "c2", removed: "erasure" }),
          example({ message_id: "m3", conversation_id: "c3", question: "where is berlin" }),
        ])}
        onSaveQuestion={() => new Promise<never>(() => undefined)}
      />,
    );
    expect(html).toContain("(removed under retention)");
    expect(html).toContain("(erased)");
    expect(html).toContain("where is berlin");
    expect(html).not.toMatch(/<a [^>]*href="\/admin\/conversations\/c1"[^>]*><\/a>/);
    // Only the stored question can be saved as a test question.
    expect(html.match(/Save as test question/g)).toHaveLength(1);
  });

  it("are named on the feedback page, question and answer", () => {
    const rated = {
      message_id: "m2",
      conversation_id: "c1",
      user_id: "7",
      user_name: "erased-1a2b",
      question: "",
      answer: "",
      rating: "down" as const,
      comment: null,
      created_at: "2026-11-30T12:00:00Z",
      updated_at: "2026-11-30T12:05:00Z",
    };
    const report: FeedbackReport = {
      since: null,
      until: null,
      up: 0,
      down: 2,
      helpful_rate: 0,
      cards: [],
      worst: [
        { ...rated, removed: "erasure" },
        { ...rated, message_id: "m3", removed: "retention" },
      ],
    };
    const html = renderToStaticMarkup(<FeedbackReportView report={report} />);
    expect(html.match(/\(erased\)/g)).toHaveLength(2);
    expect(html.match(/\(removed under retention\)/g)).toHaveLength(2);
  });
});
