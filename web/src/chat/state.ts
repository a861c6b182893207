/**
 * The chat page's state as a reducer: what is shown, and every change to it as an action.
 *
 * `loaded` (history), `asked` (a question sent), `regenerating` (the last question answered
 * again), `token` (a streamed delta), `final` (the stored answer), `failed` (nothing was
 * stored), `stopped` (the member stopped it; the server keeps what was said so far). The
 * stream itself (fetch, abort) lives in `useChat`; everything here is pure.
 */
import type {
  AnswerStatus,
  ChatResponse,
  Conversation,
  FeedbackPublic,
  HybridPath,
  Message,
  Source,
} from "../api/types";
import type { ChatProblem } from "./problems";

/** What produced an answer turn, so that Retry can do it again. */
export type TurnRequest = { kind: "ask"; question: string } | { kind: "regenerate" };

export interface DisplayTurn {
  key: string;
  role: "user" | "assistant";
  /** The stored message's id; null until the server has stored it. */
  messageId: string | null;
  content: string;
  sources: Source[];
  hybridPath: HybridPath;
  /** Assistant turns: known once the answer is final, stopped, or loaded from history. */
  answerStatus: AnswerStatus | null;
  pending: boolean;
  error: ChatProblem | null;
  /** ISO 8601; null while unknown. */
  createdAt: string | null;
  feedback: FeedbackPublic | null;
  /** The answer this one replaced (a regenerated answer). */
  regeneratedFrom: string | null;
  /** Assistant turns asked in this page: how to ask again. */
  request: TurnRequest | null;
}

export type LoadState =
  | { kind: "ready" }
  | { kind: "loading" }
  /** The conversation does not exist for this member (unknown, another's, or deleted). */
  | { kind: "missing" }
  | { kind: "failed"; problem: ChatProblem };

export interface ChatState {
  /** The stored conversation shown; null for a new one (nothing stored yet). */
  conversationId: string | null;
  title: string | null;
  turns: DisplayTurn[];
  load: LoadState;
  /** The key of the answer streaming in, or null. */
  streaming: string | null;
  /** The polite live region's text. */
  status: string;
}

export type ChatAction =
  | { type: "opened"; conversationId: string | null }
  | { type: "loaded"; conversation: Conversation }
  | { type: "loadFailed"; problem: ChatProblem; missing: boolean }
  | { type: "asked"; question: string; questionKey: string; answerKey: string; at: string }
  | { type: "regenerating"; answerKey: string }
  | { type: "token"; key: string; delta: string }
  | { type: "final"; key: string; response: ChatResponse }
  | { type: "failed"; key: string; problem: ChatProblem }
  | { type: "stopped"; key: string; conversationId: string | null; at: string }
  /** The stored conversation read back after the answer `key` was stopped (ids, the text as
   * stored); applied only if nothing changed in between. */
  | { type: "synced"; key: string; conversation: Conversation }
  | { type: "rated"; messageId: string; feedback: FeedbackPublic | null };

export const initialChat: ChatState = {
  conversationId: null,
  title: null,
  turns: [],
  load: { kind: "ready" },
  streaming: null,
  status: "",
};

const BLANK: Omit<DisplayTurn, "key" | "role"> = {
  messageId: null,
  content: "",
  sources: [],
  hybridPath: null,
  answerStatus: null,
  pending: false,
  error: null,
  createdAt: null,
  feedback: null,
  regeneratedFrom: null,
  request: null,
};

/** A stored message (history reload) as a turn. */
export function fromMessage(m: Message): DisplayTurn {
  return {
    ...BLANK,
    key: m.id,
    role: m.role,
    messageId: m.id,
    content: m.content,
    sources: m.sources ?? [],
    hybridPath: m.hybrid_path ?? null,
    answerStatus: m.role === "assistant" ? (m.answer_status ?? "answered") : null,
    createdAt: m.created_at,
    feedback: m.feedback ?? null,
    regeneratedFrom: m.regenerated_from ?? null,
  };
}

/** What a final answer (stream `final` event or `POST /chat` reply) sets on its turn. */
export function finalFields(
  r: ChatResponse,
): Pick<DisplayTurn, "content" | "sources" | "hybridPath" | "answerStatus" | "pending"> {
  return {
    content: r.answer,
    sources: r.sources ?? [],
    hybridPath: r.hybrid_path ?? null,
    answerStatus: r.answer_status ?? "answered",
    pending: false,
  };
}

/** The conversation title the server gives a new conversation: its first question, shortened
 * at a word to 80 characters (as `citewall.chat.titles.title_from`). Only for a stopped first
 * answer, which has no final reply to carry the server's title. */
export function titleFrom(question: string): string {
  const flat = question.split(/\s+/).filter(Boolean).join(" ");
  if (flat.length <= 80) return flat;
  const cut = flat.slice(0, 80);
  const space = cut.lastIndexOf(" ");
  return `${space === -1 ? cut : cut.slice(0, space)}…`;
}

/** The newest assistant turn, the one Regenerate answers again. */
export function latestAnswer(turns: readonly DisplayTurn[]): DisplayTurn | undefined {
  for (let i = turns.length - 1; i >= 0; i -= 1) {
    const t = turns[i];
    if (t?.role === "assistant") return t;
  }
  return undefined;
}

/** Ids of answers a later, regenerated answer replaced (they stay in the history). */
export function replacedAnswers(turns: readonly DisplayTurn[]): Set<string> {
  const out = new Set<string>();
  for (const t of turns) if (t.regeneratedFrom) out.add(t.regeneratedFrom);
  return out;
}

/** Whether a stored message's words are gone: retention (docs/privacy.md) leaves a stored
 * message's content empty, and nothing else stores an empty question or answer. */
export function wordsRemoved(t: DisplayTurn): boolean {
  return t.messageId !== null && !t.pending && t.error === null && t.content === "";
}

/** Whether a finished answer was stored by the server (a stop before any prose stores nothing). */
export function isStored(t: DisplayTurn): boolean {
  return t.messageId !== null || (t.answerStatus === "stopped" && t.content !== "");
}

/** How many messages the server holds for the turns shown, once no answer is streaming. */
export function storedCount(turns: readonly DisplayTurn[]): number {
  return withoutUnstored(turns).length;
}

/** Turns that never reached the server (failed, or stopped before any prose) and their
 * questions: dropped when the member asks again, since reload would not show them either. */
function withoutUnstored(turns: readonly DisplayTurn[]): DisplayTurn[] {
  const out: DisplayTurn[] = [];
  for (const t of turns) {
    const unstored =
      t.role === "assistant" &&
      !t.pending &&
      (t.error !== null || (t.answerStatus === "stopped" && t.content === ""));
    if (!unstored) {
      out.push(t);
      continue;
    }
    const previous = out[out.length - 1];
    if (t.request?.kind === "ask" && previous?.role === "user" && previous.messageId === null) {
      out.pop();
    }
  }
  return out;
}

function patch(state: ChatState, key: string, change: Partial<DisplayTurn>): DisplayTurn[] {
  return state.turns.map((t) => (t.key === key ? { ...t, ...change } : t));
}

export function chatReducer(state: ChatState, action: ChatAction): ChatState {
  // A stream's late events for a turn no longer shown (the member opened another
  // conversation) change nothing.
  if ("key" in action && !state.turns.some((t) => t.key === action.key)) return state;
  switch (action.type) {
    case "opened":
      return {
        ...initialChat,
        conversationId: action.conversationId,
        load: action.conversationId === null ? { kind: "ready" } : { kind: "loading" },
      };
    case "loaded":
      return {
        ...state,
        conversationId: action.conversation.id,
        title: action.conversation.title,
        turns: action.conversation.messages.map(fromMessage),
        load: { kind: "ready" },
        streaming: null,
      };
    case "loadFailed":
      return {
        ...state,
        load: action.missing ? { kind: "missing" } : { kind: "failed", problem: action.problem },
      };
    case "asked": {
      const question: DisplayTurn = {
        ...BLANK,
        key: action.questionKey,
        role: "user",
        content: action.question,
        createdAt: action.at,
      };
      const answer: DisplayTurn = {
        ...BLANK,
        key: action.answerKey,
        role: "assistant",
        pending: true,
        request: { kind: "ask", question: action.question },
      };
      return {
        ...state,
        turns: [...withoutUnstored(state.turns), question, answer],
        streaming: action.answerKey,
        status: "Answering…",
      };
    }
    case "regenerating": {
      const turns = withoutUnstored(state.turns);
      const answer: DisplayTurn = {
        ...BLANK,
        key: action.answerKey,
        role: "assistant",
        pending: true,
        regeneratedFrom: latestAnswer(turns)?.messageId ?? null,
        request: { kind: "regenerate" },
      };
      return {
        ...state,
        turns: [...turns, answer],
        streaming: action.answerKey,
        status: "Answering again…",
      };
    }
    case "token":
      return {
        ...state,
        turns: state.turns.map((t) =>
          t.key === action.key ? { ...t, content: t.content + action.delta } : t,
        ),
      };
    case "final": {
      const r = action.response;
      return {
        ...state,
        conversationId: r.conversation_id,
        // The server names the conversation (its first real question; small talk names nothing).
        title: r.title,
        turns: patch(state, action.key, {
          ...finalFields(r),
          messageId: r.message_id,
          createdAt: r.created_at,
          error: null,
        }),
        streaming: state.streaming === action.key ? null : state.streaming,
        status: "Answer ready.",
      };
    }
    case "failed":
      return {
        ...state,
        turns: patch(state, action.key, { pending: false, error: action.problem }),
        streaming: state.streaming === action.key ? null : state.streaming,
        status: "The answer failed.",
      };
    case "stopped": {
      const turn = state.turns.find((t) => t.key === action.key);
      // The server stores the question and the prose said so far; with no prose, nothing.
      const stored = turn !== undefined && turn.content !== "";
      const question = turn?.request?.kind === "ask" ? turn.request.question : null;
      const opensConversation = stored && state.conversationId === null;
      return {
        ...state,
        conversationId: opensConversation ? action.conversationId : state.conversationId,
        title:
          opensConversation && action.conversationId !== null && question !== null
            ? (state.title ?? titleFrom(question))
            : state.title,
        turns: patch(state, action.key, {
          pending: false,
          answerStatus: "stopped",
          createdAt: action.at,
        }),
        streaming: state.streaming === action.key ? null : state.streaming,
        status: "Answer stopped.",
      };
    }
    case "synced":
      if (
        state.streaming !== null ||
        state.turns[state.turns.length - 1]?.key !== action.key ||
        state.turns.length !== action.conversation.messages.length ||
        state.conversationId !== action.conversation.id
      )
        return state;
      // Same keys: the turns stay the same elements (focus and open popovers survive).
      return {
        ...state,
        turns: action.conversation.messages.map((m, i) => ({
          ...fromMessage(m),
          key: state.turns[i]?.key ?? m.id,
        })),
      };
    case "rated":
      return {
        ...state,
        turns: state.turns.map((t) =>
          t.messageId === action.messageId ? { ...t, feedback: action.feedback } : t,
        ),
      };
  }
}
