import { describe, expect, it } from "vitest";

import type { ChatResponse, Conversation, FeedbackPublic } from "../src/api/types";
import {
  chatReducer,
  initialChat,
  isStored,
  latestAnswer,
  storedCount,
  replacedAnswers,
  titleFrom,
  type ChatAction,
  type ChatState,
} from "../src/chat/state";

const AT = "2026-03-10T10:00:00Z";

const reply = (change: Partial<ChatResponse> = {}): ChatResponse => ({
  conversation_id: "c1",
  title: "How long do refunds take?",
  message_id: "m2",
  answer: "Refunds take five days [1].",
  answer_status: "answered",
  sources: [
    {
      card_id: "refunds",
      title: "Refunds",
      url: "https://help.example/refunds",
      excerpt: "",
      metadata: {},
    },
  ],
  hybrid_path: "full",
  created_at: AT,
  ...change,
});

const history: Conversation = {
  id: "c1",
  title: "Refunds",
  created_at: AT,
  messages: [
    {
      id: "m1",
      role: "user",
      content: "How long do refunds take?",
      answer_status: null,
      sources: [],
      hybrid_path: null,
      feedback: null,
      regenerated_from: null,
      created_at: AT,
    },
    {
      id: "m2",
      role: "assistant",
      content: "Five days [1].",
      answer_status: "answered",
      sources: [],
      hybrid_path: "rrf_only",
      feedback: null,
      regenerated_from: null,
      created_at: AT,
    },
  ],
};

function run(actions: ChatAction[], from: ChatState = initialChat): ChatState {
  return actions.reduce(chatReducer, from);
}

const asked = (question: string, n: number): ChatAction => ({
  type: "asked",
  question,
  questionKey: `q${n}`,
  answerKey: `a${n}`,
  at: AT,
});

describe("chatReducer: opening and loading", () => {
  it("opens a new conversation ready, an existing one loading", () => {
    expect(run([{ type: "opened", conversationId: null }]).load).toEqual({ kind: "ready" });
    const opening = run([{ type: "opened", conversationId: "c1" }]);
    expect(opening.load).toEqual({ kind: "loading" });
    expect(opening.conversationId).toBe("c1");
  });

  it("loads the history: turns, title, statuses, feedback", () => {
    const s = run([
      { type: "opened", conversationId: "c1" },
      { type: "loaded", conversation: history },
    ]);
    expect(s.load).toEqual({ kind: "ready" });
    expect(s.title).toBe("Refunds");
    expect(s.turns.map((t) => [t.role, t.messageId, t.answerStatus])).toEqual([
      ["user", "m1", null],
      ["assistant", "m2", "answered"],
    ]);
  });

  it("tells a missing conversation from one that failed to load", () => {
    const problem = { message: "x", retry: true };
    const missing = run([{ type: "loadFailed", problem, missing: true }]);
    expect(missing.load).toEqual({ kind: "missing" });
    const failed = run([{ type: "loadFailed", problem, missing: false }]);
    expect(failed.load).toEqual({ kind: "failed", problem });
  });

  it("opening another conversation forgets everything shown", () => {
    const s = run([
      { type: "loaded", conversation: history },
      asked("more?", 1),
      { type: "opened", conversationId: "c2" },
    ]);
    expect(s.turns).toEqual([]);
    expect(s.title).toBeNull();
    expect(s.streaming).toBeNull();
  });
});

describe("chatReducer: asking", () => {
  it("adds the question and a pending answer, then streams into it", () => {
    const s = run([
      asked("How long do refunds take?", 1),
      { type: "token", key: "a1", delta: "Five " },
      { type: "token", key: "a1", delta: "days." },
    ]);
    expect(s.streaming).toBe("a1");
    expect(s.turns.map((t) => [t.role, t.content, t.pending])).toEqual([
      ["user", "How long do refunds take?", false],
      ["assistant", "Five days.", true],
    ]);
    expect(s.turns[1]?.request).toEqual({ kind: "ask", question: "How long do refunds take?" });
  });

  it("final: the stored answer replaces the streamed text; a new conversation gets its id and title", () => {
    const s = run([
      asked("How long do refunds take?", 1),
      { type: "token", key: "a1", delta: "Five" },
      { type: "final", key: "a1", response: reply() },
    ]);
    expect(s.conversationId).toBe("c1");
    expect(s.title).toBe("How long do refunds take?");
    expect(s.streaming).toBeNull();
    expect(s.status).toBe("Answer ready.");
    const answer = s.turns[1];
    expect(answer?.content).toBe("Refunds take five days [1].");
    expect(answer?.messageId).toBe("m2");
    expect(answer?.createdAt).toBe(AT);
    expect(answer?.sources).toHaveLength(1);
    expect(answer && isStored(answer)).toBe(true);
  });

  it("keeps an existing conversation's title", () => {
    const s = run([
      { type: "loaded", conversation: history },
      asked("And for annual plans?", 2),
      { type: "final", key: "a2", response: reply({ message_id: "m4", title: "Refunds" }) },
    ]);
    expect(s.title).toBe("Refunds");
  });

  it("takes the server's title: a greeting leaves it neutral, the first question names it", () => {
    const s = run([
      asked("hello there", 1),
      { type: "final", key: "a1", response: reply({ title: "New conversation" }) },
    ]);
    expect(s.title).toBe("New conversation");
    const named = run(
      [
        asked("Can I pause my plan?", 3),
        {
          type: "final",
          key: "a3",
          response: reply({ message_id: "m4", title: "Can I pause my plan?" }),
        },
      ],
      s,
    );
    expect(named.title).toBe("Can I pause my plan?");
  });

  it("failed: the answer shows the problem; a new conversation gets no id and no title", () => {
    const problem = { message: "Try again.", retry: true };
    const s = run([asked("Q1", 1), { type: "failed", key: "a1", problem }]);
    expect(s.conversationId).toBeNull();
    expect(s.title).toBeNull();
    expect(s.streaming).toBeNull();
    expect(s.turns[1]).toMatchObject({ pending: false, error: problem });
    expect(s.turns[1] && isStored(s.turns[1])).toBe(false);
  });

  it("the next question replaces a failed one (it was never stored) and names the conversation", () => {
    const problem = { message: "Try again.", retry: true };
    const s = run([
      asked("Q1", 1),
      { type: "failed", key: "a1", problem },
      asked("Q2", 2),
      { type: "final", key: "a2", response: reply({ title: "Q2" }) },
    ]);
    expect(s.turns.map((t) => t.content)).toEqual(["Q2", "Refunds take five days [1]."]);
    expect(s.title).toBe("Q2");
  });

  it("ignores late events for turns no longer shown", () => {
    const s = run([asked("Q1", 1), { type: "opened", conversationId: "c9" }]);
    const after = run(
      [
        { type: "token", key: "a1", delta: "late" },
        { type: "final", key: "a1", response: reply() },
        { type: "stopped", key: "a1", conversationId: "c1", at: AT },
      ],
      s,
    );
    expect(after).toBe(s);
  });
});

describe("chatReducer: stopping", () => {
  it("keeps what was said, marked stopped; the server stored it, so the conversation exists", () => {
    const s = run([
      asked("How long do refunds take?", 1),
      { type: "token", key: "a1", delta: "Refunds take" },
      { type: "stopped", key: "a1", conversationId: "c1", at: AT },
    ]);
    expect(s.turns[1]).toMatchObject({
      content: "Refunds take",
      answerStatus: "stopped",
      pending: false,
      createdAt: AT,
    });
    expect(s.conversationId).toBe("c1");
    expect(s.title).toBe("How long do refunds take?");
    expect(s.streaming).toBeNull();
    expect(s.status).toBe("Answer stopped.");
    expect(s.turns[1] && isStored(s.turns[1])).toBe(true);
  });

  it("a stop before any prose stores nothing: no conversation, and the next question replaces it", () => {
    const s = run([asked("Q1", 1), { type: "stopped", key: "a1", conversationId: "c1", at: AT }]);
    expect(s.conversationId).toBeNull();
    expect(s.title).toBeNull();
    expect(s.turns[1] && isStored(s.turns[1])).toBe(false);
    const next = run([asked("Q2", 2)], s);
    expect(next.turns.map((t) => t.content)).toEqual(["Q2", ""]);
  });

  it("counts the messages the server holds for what is shown", () => {
    const problem = { message: "x", retry: true };
    const s = run([
      { type: "loaded", conversation: history },
      asked("Q2", 2),
      { type: "failed", key: "a2", problem },
    ]);
    expect(storedCount(s.turns)).toBe(2);
    const stopped = run(
      [
        asked("Q3", 3),
        { type: "token", key: "a3", delta: "x" },
        { type: "stopped", key: "a3", conversationId: "c1", at: AT },
      ],
      s,
    );
    expect(storedCount(stopped.turns)).toBe(4);
  });

  it("a stored stopped answer stays when the member asks again", () => {
    const s = run([
      { type: "loaded", conversation: history },
      asked("Q2", 2),
      { type: "token", key: "a2", delta: "Part" },
      { type: "stopped", key: "a2", conversationId: "c1", at: AT },
      asked("Q3", 3),
    ]);
    expect(s.turns.map((t) => t.content)).toEqual([
      "How long do refunds take?",
      "Five days [1].",
      "Q2",
      "Part",
      "Q3",
      "",
    ]);
  });

  it("synced: the stored conversation replaces the view, unless something changed meanwhile", () => {
    const stopped = run([
      { type: "loaded", conversation: history },
      asked("Q2", 2),
      { type: "token", key: "a2", delta: "Part" },
      { type: "stopped", key: "a2", conversationId: "c1", at: AT },
    ]);
    const stored: Conversation = {
      ...history,
      messages: [
        ...history.messages,
        {
          id: "m3",
          role: "user",
          content: "Q2",
          answer_status: null,
          sources: [],
          hybrid_path: null,
          feedback: null,
          regenerated_from: null,
          created_at: AT,
        },
        {
          id: "m4",
          role: "assistant",
          content: "Part",
          answer_status: "stopped",
          sources: [],
          hybrid_path: null,
          feedback: null,
          regenerated_from: null,
          created_at: AT,
        },
      ],
    };
    const synced = run([{ type: "synced", key: "a2", conversation: stored }], stopped);
    expect(synced.turns.map((t) => t.messageId)).toEqual(["m1", "m2", "m3", "m4"]);
    expect(synced.turns.map((t) => t.key)).toEqual(stopped.turns.map((t) => t.key));
    expect(synced.turns[3]?.answerStatus).toBe("stopped");
    const moved = run([asked("Q3", 3)], stopped);
    expect(run([{ type: "synced", key: "a2", conversation: stored }], moved)).toBe(moved);
    // Read back too early (without the stopped answer): nothing changes.
    const early = { ...stored, messages: stored.messages.slice(0, 2) };
    expect(run([{ type: "synced", key: "a2", conversation: early }], stopped)).toBe(stopped);
  });
});

describe("chatReducer: regenerating and rating", () => {
  const loaded = run([{ type: "loaded", conversation: history }]);

  it("adds a new answer that replaces the latest one; the earlier one stays", () => {
    const s = run(
      [
        { type: "regenerating", answerKey: "r1" },
        {
          type: "final",
          key: "r1",
          response: reply({ message_id: "m3", answer: "Again.", title: "Refunds" }),
        },
      ],
      loaded,
    );
    expect(s.turns.map((t) => [t.role, t.messageId, t.regeneratedFrom])).toEqual([
      ["user", "m1", null],
      ["assistant", "m2", null],
      ["assistant", "m3", "m2"],
    ]);
    expect(s.turns[2]?.request).toEqual({ kind: "regenerate" });
    expect(latestAnswer(s.turns)?.messageId).toBe("m3");
    expect([...replacedAnswers(s.turns)]).toEqual(["m2"]);
    expect(s.title).toBe("Refunds");
  });

  it("rated: sets and withdraws the member's feedback on one answer", () => {
    const feedback: FeedbackPublic = {
      message_id: "m2",
      rating: "down",
      comment: "Out of date",
      updated_at: AT,
    };
    const rated = run([{ type: "rated", messageId: "m2", feedback }], loaded);
    expect(rated.turns[1]?.feedback).toEqual(feedback);
    expect(rated.turns[0]?.feedback).toBeNull();
    const withdrawn = run([{ type: "rated", messageId: "m2", feedback: null }], rated);
    expect(withdrawn.turns[1]?.feedback).toBeNull();
  });
});

describe("titleFrom", () => {
  it("is the question, whitespace collapsed, cut at a word to 80 characters", () => {
    expect(titleFrom("  How   long\ndo refunds take? ")).toBe("How long do refunds take?");
    const long = "word ".repeat(30).trim();
    const title = titleFrom(long);
    expect(title.endsWith("…")).toBe(true);
    expect(title.length).toBeLessThanOrEqual(81);
    expect(title.slice(0, -1).endsWith("word")).toBe(true);
  });
});
