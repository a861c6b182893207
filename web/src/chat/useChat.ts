/**
 * The chat page's behaviour: open a conversation, ask, answer again, stop, retry, rate.
 *
 * State changes go through `chatReducer`. Each answer streams over a fetch with its own
 * AbortController: Stop aborts it (the server stores what was said so far, marked stopped),
 * and so does opening another conversation or leaving the page, whose late events are then
 * ignored.
 */
import { useCallback, useEffect, useReducer, useRef, useState } from "react";

import { ApiError, type ApiClient } from "../api/client";
import type { Conversation, Rating, StreamEvent } from "../api/types";
import {
  feedbackProblem,
  problemFor,
  regenerateProblem,
  streamCut,
  streamProblem,
  type ChatProblem,
} from "./problems";
import { chatReducer, initialChat, storedCount, type ChatState, type DisplayTurn } from "./state";

/** How an answer ended. */
export type Outcome = "answered" | "failed" | "stopped";

type Start = (onEvent: (event: StreamEvent) => void, signal: AbortSignal) => Promise<void>;

// Why a stream was aborted when not by Stop: the page no longer shows it.
const LEFT = new DOMException("The page no longer shows this answer.", "AbortError");

/** Reads of a stopped conversation, waiting for the server to store the partial answer. */
const SYNC_DELAYS_MS = [300, 600, 1200, 2400];

let localKey = 0;
function nextKey(): string {
  localKey += 1;
  return `local-${localKey}`;
}

export interface Chat {
  state: ChatState;
  /** Send a question; resolves with how its answer ended. */
  ask: (question: string) => Promise<Outcome>;
  /** Answer the last question again (a new stored answer; the earlier one stays). */
  regenerate: () => Promise<Outcome>;
  /** Do again what a failed (or empty stopped) answer turn was doing. */
  retry: (turn: DisplayTurn) => Promise<Outcome>;
  /** Stop the answer streaming in. */
  stop: () => void;
  /** Rate an answer (`null` withdraws the rating); resolves with a problem, or null. */
  rate: (
    messageId: string,
    rating: Rating | null,
    comment?: string | null,
  ) => Promise<ChatProblem | null>;
  /** Read the open conversation again (after it failed to load). */
  reload: () => void;
}

/**
 * The chat of conversation `conversationId` (null: a new one). `onOpened` is told the id of the
 * conversation a first answer opened (the page then shows it as the open one); `onStored`, that
 * a turn was stored.
 */
export function useChat(
  client: ApiClient,
  conversationId: string | null,
  onOpened: (id: string) => void,
  onStored?: () => void,
): Chat {
  const [state, dispatch] = useReducer(chatReducer, conversationId, (id) => ({
    ...initialChat,
    conversationId: id,
    load: id === null ? { kind: "ready" as const } : { kind: "loading" as const },
  }));
  // The route's conversation the view was opened for, and which opening this is. When the
  // route changes to anything else, the view opens it afresh (state adjusted while rendering,
  // not in an effect); when it changes to the conversation the view itself just stored (a new
  // conversation's first answer), nothing reloads.
  const [openedFor, setOpenedFor] = useState(conversationId);
  const [opening, setOpening] = useState(0);
  if (conversationId !== openedFor) {
    setOpenedFor(conversationId);
    if (conversationId === null || conversationId !== state.conversationId) {
      setOpening((n) => n + 1);
      dispatch({ type: "opened", conversationId });
    }
  }

  // The answers in flight (one at a time in practice). Another opening or leaving the page
  // aborts them; their late events then change nothing.
  const streams = useRef(new Set<AbortController>());
  useEffect(() => {
    const inFlight = streams.current;
    return () => inFlight.forEach((c) => c.abort(LEFT));
  }, [opening]);

  const loadingId = state.load.kind === "loading" ? state.conversationId : null;
  useEffect(() => {
    if (loadingId === null) return;
    let live = true;
    client.conversation(loadingId).then(
      (conversation) => live && dispatch({ type: "loaded", conversation }),
      (err: unknown) =>
        live &&
        dispatch({
          type: "loadFailed",
          problem: problemFor(err),
          missing: err instanceof ApiError && err.status === 404,
        }),
    );
    return () => {
      live = false;
    };
  }, [client, loadingId]);

  /** Run one answer stream into the turn `key`. */
  const run = useCallback(
    async (
      key: string,
      start: Start,
      /** Messages the server will hold once it has stored this answer. */
      messages: number,
      opensConversation: boolean,
      problemOf: (err: unknown) => ChatProblem = problemFor,
    ): Promise<Outcome> => {
      const controller = new AbortController();
      streams.current.add(controller);
      let metaId: string | null = null;
      let said = false;
      let outcome: Outcome | null = null;
      try {
        await start((event) => {
          switch (event.event) {
            case "meta":
              metaId = event.data.conversation_id;
              break;
            case "token":
              said = true;
              dispatch({ type: "token", key, delta: event.data.delta });
              break;
            case "final":
              outcome = "answered";
              dispatch({ type: "final", key, response: event.data });
              if (opensConversation) onOpened(event.data.conversation_id);
              onStored?.();
              break;
            case "error":
              outcome = "failed";
              dispatch({ type: "failed", key, problem: streamProblem() });
              break;
          }
        }, controller.signal);
        if (outcome === null) {
          outcome = "failed";
          dispatch({ type: "failed", key, problem: streamCut() });
        }
        return outcome;
      } catch (err) {
        // An abort after the final event (the view moved on as the stream closed) changes
        // nothing.
        if (outcome !== null) return outcome;
        if (controller.signal.aborted) {
          const left = controller.signal.reason === LEFT;
          if (!left) {
            const at = new Date().toISOString();
            dispatch({ type: "stopped", key, conversationId: metaId, at });
          }
          const id: string | null = metaId;
          if (said && id !== null) {
            // The server stores the question and what was said so far, once it notices.
            if (opensConversation && !left) onOpened(id);
            void readStopped(client, id, messages).then((conversation) => {
              if (!conversation) return;
              if (!left) dispatch({ type: "synced", key, conversation });
              onStored?.();
            });
          }
          return "stopped";
        }
        dispatch({ type: "failed", key, problem: problemOf(err) });
        return "failed";
      } finally {
        streams.current.delete(controller);
      }
    },
    [client, onOpened, onStored],
  );

  const ask = useCallback(
    (question: string): Promise<Outcome> => {
      const answerKey = nextKey();
      const at = new Date().toISOString();
      dispatch({ type: "asked", question, questionKey: nextKey(), answerKey, at });
      const id = state.conversationId;
      return run(
        answerKey,
        (onEvent, signal) =>
          client.chatStream({ message: question, conversation_id: id }, onEvent, signal),
        storedCount(state.turns) + 2,
        id === null,
      );
    },
    [client, run, state.conversationId, state.turns],
  );

  const regenerate = useCallback((): Promise<Outcome> => {
    const id = state.conversationId;
    if (id === null) return Promise.resolve<Outcome>("failed");
    const answerKey = nextKey();
    dispatch({ type: "regenerating", answerKey });
    return run(
      answerKey,
      (onEvent, signal) => client.regenerateStream(id, onEvent, signal),
      storedCount(state.turns) + 1,
      false,
      regenerateProblem,
    );
  }, [client, run, state.conversationId, state.turns]);

  const retry = useCallback(
    (turn: DisplayTurn): Promise<Outcome> => {
      if (turn.request?.kind === "regenerate") return regenerate();
      if (turn.request?.kind === "ask") return ask(turn.request.question);
      return Promise.resolve<Outcome>("failed");
    },
    [ask, regenerate],
  );

  const stop = useCallback(() => streams.current.forEach((c) => c.abort()), []);

  const rate = useCallback(
    async (
      messageId: string,
      rating: Rating | null,
      comment: string | null = null,
    ): Promise<ChatProblem | null> => {
      try {
        if (rating === null) {
          await client.unrateAnswer(messageId);
          dispatch({ type: "rated", messageId, feedback: null });
        } else {
          const feedback = await client.rateAnswer(messageId, { rating, comment });
          dispatch({ type: "rated", messageId, feedback });
        }
        return null;
      } catch (err) {
        return feedbackProblem(err);
      }
    },
    [client],
  );

  const shown = state.conversationId;
  const reload = useCallback(() => dispatch({ type: "opened", conversationId: shown }), [shown]);

  return { state, ask, regenerate, retry, stop, rate, reload };
}

/**
 * Read conversation `id` until the server holds `messages` messages, the last one a stopped
 * answer (it stores a stopped answer once it notices the closed connection); null if it does
 * not within a few seconds.
 */
async function readStopped(
  client: ApiClient,
  id: string,
  messages: number,
): Promise<Conversation | null> {
  for (const delay of SYNC_DELAYS_MS) {
    await new Promise((resolve) => window.setTimeout(resolve, delay));
    try {
      const conversation = await client.conversation(id);
      const last = conversation.messages[conversation.messages.length - 1];
      if (conversation.messages.length === messages && last?.answer_status === "stopped") {
        return conversation;
      }
    } catch {
      // Not readable yet (a new conversation is stored with its stopped answer): read again.
    }
  }
  return null;
}
