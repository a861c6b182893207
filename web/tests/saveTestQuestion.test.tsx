// @vitest-environment happy-dom
/**
 * "Save as test question" on an admin's stored answer: the card picked (the answer's cited
 * cards first) or "unanswerable", facts one a line, and what the server said.
 */
import { act } from "react";
import { createRoot, type Root } from "react-dom/client";
import { renderToStaticMarkup } from "react-dom/server";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

import { AdminTurn, citedCards } from "../src/admin/AdminConversationView";
import { GapsReport } from "../src/admin/AdminGaps";
import { questionRequest } from "../src/admin/SaveTestQuestion";
import type {
  AdminMessage,
  EvalQuestionAdmin,
  EvalQuestionCreate,
  KnowledgeGapReport,
} from "../src/api/types";

const answer: AdminMessage = {
  id: "m2",
  seq: 2,
  role: "assistant",
  content: "Refunds take five days [1].",
  sources: [
    { n: 1, card_id: "help-refunds", title: "Refunds" },
    { n: 2, card_id: "pb-refunds-annual", title: "Annual refunds" },
    { n: 3, card_id: "help-refunds", title: "Refunds again" },
  ],
  hybrid_path: "rrf_only",
  timings: null,
  generator: "extractive",
  created_at: "2026-11-30T12:00:00Z",
  regenerated_from: null,
  feedback: null,
};

function saved(body: EvalQuestionCreate): EvalQuestionAdmin {
  return {
    id: 7,
    question: "How long do refunds take?",
    expected: body.expected ?? [],
    unanswerable: body.unanswerable ?? false,
    facts: body.facts ?? [],
    conversation: [],
    source: body.source ?? "conversation",
    message_id: body.message_id,
    created_at: "2026-11-30T12:01:00Z",
    updated_at: "2026-11-30T12:01:00Z",
  };
}

describe("the request a test question makes", () => {
  it("sends the chosen card and one fact per line, or nothing but unanswerable", () => {
    expect(
      questionRequest("m2", "gap", {
        unanswerable: false,
        card: " help-refunds ",
        facts: "a\n\n b ",
      }),
    ).toEqual({
      message_id: "m2",
      source: "gap",
      unanswerable: false,
      expected: ["help-refunds"],
      facts: ["a", "b"],
    });
    expect(
      questionRequest("m2", "conversation", { unanswerable: true, card: "x", facts: "y" }),
    ).toEqual({
      message_id: "m2",
      source: "conversation",
      unanswerable: true,
      expected: [],
      facts: [],
    });
  });

  it("offers the answer's cited cards once each, in order", () => {
    expect(citedCards(answer.sources)).toEqual(["help-refunds", "pb-refunds-annual"]);
  });

  it("is offered on answers only, and only where the page can save", () => {
    expect(renderToStaticMarkup(<AdminTurn message={answer} onSaveQuestion={vi.fn()} />)).toContain(
      "Save as test question",
    );
    expect(renderToStaticMarkup(<AdminTurn message={answer} />)).not.toContain(
      "Save as test question",
    );
    const question: AdminMessage = { ...answer, role: "user", content: "How long?" };
    expect(
      renderToStaticMarkup(<AdminTurn message={question} onSaveQuestion={vi.fn()} />),
    ).not.toContain("Save as test question");
  });
});

describe("saving from the conversation view", () => {
  let container: HTMLDivElement;
  let root: Root;

  beforeEach(() => {
    container = document.createElement("div");
    document.body.append(container);
    root = createRoot(container);
  });

  afterEach(() => {
    act(() => root.unmount());
    container.remove();
  });

  const submit = async (): Promise<void> => {
    await act(async () => {
      container
        .querySelector("form")!
        .dispatchEvent(new Event("submit", { bubbles: true, cancelable: true }));
      await Promise.resolve();
    });
  };

  it("saves the first cited card by default and says so", async () => {
    const onSave = vi.fn((body: EvalQuestionCreate) => Promise.resolve(saved(body)));
    act(() => root.render(<AdminTurn message={answer} onSaveQuestion={onSave} />));
    await submit();
    expect(onSave).toHaveBeenCalledWith({
      message_id: "m2",
      source: "conversation",
      unanswerable: false,
      expected: ["help-refunds"],
      facts: [],
    });
    await vi.waitFor(() =>
      expect(container.querySelector("[role=status]")?.textContent).toContain("saved-7"),
    );
  });

  it("marks a rated answer unanswerable, and shows the server's refusal", async () => {
    const onSave = vi.fn(() => Promise.reject(new Error("card 'x' is not in the knowledge base")));
    const rated: AdminMessage = {
      ...answer,
      feedback: {
        rating: "down",
        comment: null,
        created_at: answer.created_at,
        updated_at: answer.created_at,
      },
    };
    act(() => root.render(<AdminTurn message={rated} onSaveQuestion={onSave} />));
    act(() => {
      container
        .querySelector<HTMLInputElement>("[data-testid=test-question-unanswerable]")!
        .click();
    });
    await submit();
    expect(onSave).toHaveBeenCalledWith({
      message_id: "m2",
      source: "feedback",
      unanswerable: true,
      expected: [],
      facts: [],
    });
    await vi.waitFor(() =>
      expect(container.querySelector("[role=alert]")?.textContent).toContain(
        "not in the knowledge base",
      ),
    );
  });
});

const gaps: KnowledgeGapReport = {
  period: "week",
  low_support_below: 0.5,
  min_coverage: 0.7,
  since: null,
  until: null,
  questions: 1,
  truncated: false,
  groups: [
    {
      question: "do you ship to mars",
      count: 1,
      not_found: 1,
      low_coverage: 1,
      rated_down: 0,
      low_support: 0,
      last_asked: "2026-03-10T10:00:00Z",
      per_period: [{ period_start: "2026-03-09", count: 1 }],
      examples: [
        {
          message_id: "m9",
          conversation_id: "c9",
          question: "do you ship to mars",
          answer_status: "not_found",
          support: null,
          asked_at: "2026-03-10T10:00:00Z",
          reason: "not_found",
          coverage: 0.0,
          rating: null,
        },
      ],
    },
  ],
  answered_badly_questions: 0,
  answered_badly: [],
};

describe("saving from the knowledge gaps", () => {
  it("offers each listed question, saved as a gap", async () => {
    const container = document.createElement("div");
    document.body.append(container);
    const root = createRoot(container);
    const onSave = vi.fn((body: EvalQuestionCreate) => Promise.resolve(saved(body)));
    act(() => root.render(<GapsReport report={gaps} onSaveQuestion={onSave} />));
    act(() => {
      container
        .querySelector<HTMLInputElement>("[data-testid=test-question-unanswerable]")!
        .click();
    });
    await act(async () => {
      container
        .querySelector("form")!
        .dispatchEvent(new Event("submit", { bubbles: true, cancelable: true }));
      await Promise.resolve();
    });
    expect(onSave).toHaveBeenCalledWith({
      message_id: "m9",
      source: "gap",
      unanswerable: true,
      expected: [],
      facts: [],
    });
    expect(renderToStaticMarkup(<GapsReport report={gaps} />)).not.toContain(
      "Save as test question",
    );
    act(() => root.unmount());
    container.remove();
  });
});
