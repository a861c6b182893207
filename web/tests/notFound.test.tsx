import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";

import { answerMeta } from "../src/admin/AdminConversationView";
import {
  EMPTY_GAPS,
  EMPTY_BADLY,
  GapsReport,
  badlySummary,
  gapsSummary,
  compactPeriods,
  conversationPath,
  exampleStatus,
} from "../src/admin/AdminGaps";
import { EventsTable } from "../src/admin/EventsTable";
import { retrievalEvent } from "./fixtures";
import { toStreamEvent } from "../src/api/client";
import type { ChatResponse, KnowledgeGapReport, Message, Source } from "../src/api/types";
import { finalFields, fromMessage, type DisplayTurn } from "../src/chat/state";
import {
  NOT_FOUND_LABEL,
  OTHER_LANGUAGE_LABEL,
  REPHRASE_HINT,
  Turn,
  answerLabel,
  showsSources,
} from "../src/member/Turn";

const NOT_FOUND =
  "I couldn't find anything about that in the knowledge base, so I can't answer it from there.";

const source: Source = {
  card_id: "help-refunds",
  title: "Refunds",
  url: "https://help.example/refunds",
  excerpt: "",
  metadata: {},
};

function turn(change: Partial<DisplayTurn>): DisplayTurn {
  return {
    key: "a1",
    role: "assistant",
    messageId: "a1",
    content: "Refunds take five days [1].",
    sources: [source],
    hybridPath: "full",
    answerStatus: "answered",
    pending: false,
    error: null,
    createdAt: null,
    feedback: null,
    regeneratedFrom: null,
    request: null,
    ...change,
  };
}

const render = (t: DisplayTurn): string => renderToStaticMarkup(<Turn turn={t} />);

describe("an other_language answer in the member chat", () => {
  const SPANISH =
    "Solo puedo responder en inglés, el idioma de la base de conocimientos. Por favor, haz tu pregunta en inglés.";

  it("shows its sentence with its own label and no sources panel or rephrase hint", () => {
    const t = turn({ content: SPANISH, sources: [source], answerStatus: "other_language" });
    const html = render(t);
    expect(answerLabel(t)).toBe(OTHER_LANGUAGE_LABEL);
    expect(showsSources(t)).toBe(false);
    expect(html).toContain(OTHER_LANGUAGE_LABEL);
    expect(html).toContain("Solo puedo responder en inglés");
    expect(html).not.toContain(REPHRASE_HINT);
    expect(html).not.toContain('class="sources"');
  });
});

describe("a reply to small talk in the member chat", () => {
  const GREETING =
    "Hi! Ask me a question and I'll answer it from the knowledge base, with its sources.";

  it("is its friendly sentence: no 'not answered' label, no rephrase hint, no sources", () => {
    const t = turn({ content: GREETING, sources: [], answerStatus: "small_talk" });
    const html = render(t);
    expect(answerLabel(t)).toBeNull();
    expect(showsSources(t)).toBe(false);
    expect(html).toContain("Ask me a question");
    expect(html).not.toContain(NOT_FOUND_LABEL);
    expect(html).not.toContain(REPHRASE_HINT);
    expect(html).not.toContain('data-testid="answer-status"');
    expect(html).not.toContain("No public sources");
    expect(html).not.toContain("turn-not-found");
  });

  it("keeps its status from history", () => {
    const stored: Message = {
      id: "m2",
      role: "assistant",
      content: GREETING,
      sources: [],
      hybrid_path: null,
      answer_status: "small_talk",
      created_at: "2026-03-10T10:00:00Z",
      feedback: null,
      regenerated_from: null,
    };
    expect(answerLabel(fromMessage(stored))).toBeNull();
  });
});

describe("a not_found answer in the member chat", () => {
  it("shows its sentence with the label, a suggestion to rephrase and no sources panel", () => {
    const html = render(turn({ content: NOT_FOUND, sources: [], answerStatus: "not_found" }));
    expect(html).toContain(NOT_FOUND_LABEL);
    expect(html).toContain(REPHRASE_HINT);
    expect(html).toContain('data-testid="answer-status"');
    expect(html).toContain("anything about that in the knowledge base");
    expect(html).not.toContain("Sources");
    expect(html).not.toContain("sources-none");
    expect(html).not.toContain("No public sources");
    expect(html).not.toContain("chip");
  });

  it("shows no sources even if some arrive with it", () => {
    const html = render(turn({ content: NOT_FOUND, answerStatus: "not_found" }));
    expect(html).not.toContain("Refunds");
    expect(html).not.toContain('class="sources"');
  });

  it("renders the sentence through SafeMarkdown (markers stripped, no markup from text)", () => {
    const html = render(
      turn({ content: "Hi! <b>Ask</b> me [1]", sources: [], answerStatus: "not_found" }),
    );
    expect(html).toContain('class="markdown"');
    expect(html).not.toContain("<b>");
    expect(html).not.toContain("[1]");
  });

  it("labels nothing while the answer streams or after an error", () => {
    expect(answerLabel(turn({ answerStatus: "not_found", pending: true }))).toBeNull();
    const boom = { message: "boom", retry: true };
    expect(answerLabel(turn({ answerStatus: "not_found", error: boom }))).toBeNull();
    expect(answerLabel(turn({ answerStatus: null, pending: true }))).toBeNull();
    const streaming = render(turn({ content: NOT_FOUND, answerStatus: null, pending: true }));
    expect(streaming).not.toContain(NOT_FOUND_LABEL);
    expect(streaming).not.toContain("Sources");
  });

  it("leaves an answered turn as before: its sources panel, no label", () => {
    const html = render(turn({}));
    expect(html).not.toContain(NOT_FOUND_LABEL);
    expect(html).toContain("Sources");
    expect(html).toContain("Refunds");
    expect(showsSources(turn({ sources: [] }))).toBe(true);
    expect(render(turn({ sources: [] }))).toContain("No public sources for this answer.");
  });
});

describe("answer status from the wire", () => {
  const reply: ChatResponse = {
    conversation_id: "c1",
    title: "New conversation",
    message_id: "m2",
    answer: NOT_FOUND,
    answer_status: "not_found",
    sources: [],
    hybrid_path: "full",
    created_at: "2026-03-10T10:00:00Z",
  };

  it("takes the status from a final event (and from the JSON reply alike)", () => {
    const event = toStreamEvent("final", JSON.stringify(reply));
    expect(event?.event).toBe("final");
    if (event?.event !== "final") throw new Error("not a final event");
    expect(finalFields(event.data)).toEqual({
      content: NOT_FOUND,
      sources: [],
      hybridPath: "full",
      answerStatus: "not_found",
      pending: false,
    });
    const { answer_status: _drop, ...older } = reply;
    expect(finalFields(older as ChatResponse).answerStatus).toBe("answered");
  });

  it("keeps it on history reload", () => {
    const base: Message = {
      id: "m2",
      role: "assistant",
      content: NOT_FOUND,
      answer_status: "not_found",
      sources: [],
      hybrid_path: null,
      feedback: null,
      regenerated_from: null,
      created_at: "2026-03-10T10:00:00Z",
    };
    expect(fromMessage(base).answerStatus).toBe("not_found");
    expect(fromMessage({ ...base, answer_status: null }).answerStatus).toBe("answered");
    expect(fromMessage({ ...base, role: "user", answer_status: null }).answerStatus).toBeNull();
    const reloaded = render(fromMessage(base));
    expect(reloaded).toContain(NOT_FOUND_LABEL);
    expect(reloaded).not.toContain("Sources");
  });
});

describe("admin: status, support and query", () => {
  it("shows an answer's status and support", () => {
    expect(answerMeta({ answer_status: "not_found", support: 0.21234 })).toEqual({
      status: "not_found",
      notFound: true,
      support: "0.212",
    });
    expect(answerMeta({ answer_status: "answered", support: null })).toMatchObject({
      status: "answered",
      notFound: false,
      support: "—",
    });
    expect(answerMeta({}).status).toBe("unknown");
  });

  it("shows the query each retrieval ran with, as text", () => {
    const html = renderToStaticMarkup(
      <EventsTable
        events={[
          retrievalEvent({ card_id: "c1", query: "refund window <b>x</b>", final_rank: 1 }),
          retrievalEvent({ card_id: "c2", query: null }),
        ]}
        empty="Nothing was retrieved."
      />,
    );
    expect(html).toContain('<th scope="col">Query</th>');
    expect(html).toContain("refund window &lt;b&gt;x&lt;/b&gt;");
    expect(html).toContain('<td class="query-cell">—</td>');
  });
});

describe("knowledge gaps page", () => {
  const report: KnowledgeGapReport = {
    period: "week",
    low_support_below: 0.35,
    min_coverage: 0.5,
    since: null,
    until: null,
    questions: 3,
    truncated: false,
    answered_badly_questions: 1,
    answered_badly: [
      {
        question: "how long do refunds take",
        count: 1,
        not_found: 0,
        low_coverage: 0,
        rated_down: 1,
        low_support: 0,
        last_asked: "2026-03-10T10:00:00Z",
        per_period: [{ period_start: "2026-03-09", count: 1 }],
        examples: [
          {
            message_id: "m8",
            conversation_id: "conv4",
            question: "how long do refunds take",
            answer_status: "answered",
            support: 0.7,
            asked_at: "2026-03-10T10:00:00Z",
            reason: "rated_down",
            coverage: 1,
            rating: "down",
          },
        ],
      },
    ],
    groups: [
      {
        question: "where is your office in berlin",
        count: 2,
        not_found: 1,
        low_coverage: 1,
        rated_down: 0,
        low_support: 0,
        last_asked: "2026-03-10T10:00:00Z",
        per_period: [
          { period_start: "2026-03-02", count: 1 },
          { period_start: "2026-03-09", count: 1 },
        ],
        examples: [
          {
            message_id: "m2",
            conversation_id: "conv/1",
            question: "where is your office in berlin",
            answer_status: "not_found",
            support: null,
            asked_at: "2026-03-10T10:00:00Z",
            reason: "not_found",
            coverage: 0.5,
            rating: null,
          },
          {
            message_id: "m4",
            conversation_id: "conv2",
            question: "berlin office address?",
            answer_status: "answered",
            support: 0.2,
            asked_at: "2026-03-03T10:00:00Z",
            reason: "low_coverage",
            coverage: 0.25,
            rating: null,
          },
        ],
      },
      {
        question: "hi",
        count: 1,
        not_found: 1,
        low_coverage: 0,
        rated_down: 0,
        low_support: 0,
        last_asked: "2026-03-09T10:00:00Z",
        per_period: [{ period_start: "2026-03-09", count: 1 }],
        examples: [
          {
            message_id: "m6",
            conversation_id: "conv3",
            question: "hi",
            answer_status: "not_found",
            support: null,
            asked_at: "2026-03-09T10:00:00Z",
            reason: "not_found",
            coverage: null,
            rating: null,
          },
        ],
      },
    ],
  };

  it("says so honestly when there is nothing", () => {
    const html = renderToStaticMarkup(
      <GapsReport
        report={{
          ...report,
          questions: 0,
          groups: [],
          answered_badly_questions: 0,
          answered_badly: [],
        }}
      />,
    );
    expect(html).toContain(EMPTY_GAPS);
    expect(html).toContain(EMPTY_BADLY);
    expect(html).not.toContain("<table");
  });

  it("keeps the two lists apart: gaps, and covered questions answered badly", () => {
    const html = renderToStaticMarkup(<GapsReport report={report} />);
    const [gaps, badly] = html.split("Answered badly: covered");
    expect(gaps).toContain("where is your office in berlin");
    expect(gaps).not.toContain("how long do refunds take");
    expect(badly).toContain("how long do refunds take");
    expect(badly).toContain("rated Not helpful");
    expect(badly).toContain('class="answered-badly-table gaps-list"');
    expect(badly).not.toContain("where is your office in berlin");
    const onlyGaps = renderToStaticMarkup(
      <GapsReport report={{ ...report, answered_badly_questions: 0, answered_badly: [] }} />,
    );
    expect(onlyGaps).toContain(EMPTY_BADLY);
    expect(onlyGaps).not.toContain(EMPTY_GAPS);
  });

  it("tables each group with its counts, periods and linked examples", () => {
    const html = renderToStaticMarkup(<GapsReport report={report} />);
    expect(html.match(/class="gap-row"/g)).toHaveLength(3);
    expect(html).toContain("3 questions in 2 groups");
    expect(html).toContain("Per week");
    expect(html).toContain("where is your office in berlin");
    expect(html).toContain('href="/admin/conversations/conv%2F1"');
    expect(html).toContain('href="/admin/conversations/conv2"');
    expect(html).toContain("low coverage (0.250)");
    expect(html).toContain("2026-03-02");
    expect(html).toContain("<summary>2 questions</summary>");
    expect(html).toContain("<summary>1 question</summary>");
  });

  it("says when only the largest groups were sent", () => {
    expect(gapsSummary(report)).toBe(
      "3 questions in 2 groups (not found, or answered with no retrieved card covering 0.50 of the question's terms).",
    );
    expect(gapsSummary({ ...report, questions: 9 })).toBe(
      "9 questions (not found, or answered with no retrieved card covering 0.50 of the question's terms); the 2 largest groups shown hold 3.",
    );
    expect(badlySummary(report)).toBe(
      "1 question in 1 group (covered, but rated Not helpful or answered with support below 0.350).",
    );
  });

  it("keeps per-period counts compact: the newest periods, the earlier ones summed", () => {
    const periods = ["01", "02", "03", "04", "05"].map((d, i) => ({
      period_start: `2026-01-${d}`,
      count: i + 1,
    }));
    const c = compactPeriods([...periods].reverse(), 3);
    expect(c.shown.map((p) => p.period_start)).toEqual(["2026-01-03", "2026-01-04", "2026-01-05"]);
    expect(c).toMatchObject({ earlierPeriods: 2, earlierCount: 3 });
    expect(compactPeriods(periods).earlierPeriods).toBe(0);
    expect(compactPeriods([])).toEqual({ shown: [], earlierPeriods: 0, earlierCount: 0 });
  });

  it("names example statuses and conversation links", () => {
    expect(exampleStatus({ reason: "not_found", support: 0.5, coverage: 1 })).toBe("not found");
    expect(exampleStatus({ reason: "low_support", support: null, coverage: 1 })).toBe(
      "low support (—)",
    );
    expect(exampleStatus({ reason: "low_coverage", support: 0.7, coverage: 0.25 })).toBe(
      "low coverage (0.250)",
    );
    expect(exampleStatus({ reason: "rated_down", support: 0.7, coverage: 1 })).toBe(
      "rated Not helpful",
    );
    expect(conversationPath("a b")).toBe("/admin/conversations/a%20b");
  });
});
