/**
 * The open conversation: its title, the turns, example questions when it is empty, and the
 * question box. Answers stream in token by token and the view follows them unless the reader
 * scrolled up ("Jump to latest" brings them back). A reload of /c/<id> rebuilds the same view
 * from history, scrolled to the newest message.
 */
import { useEffect, useRef, useState, type ReactNode } from "react";

import type { ApiClient } from "../api/client";
import type { ConversationSummary } from "../api/types";
import { latestAnswer, replacedAnswers, type DisplayTurn } from "../chat/state";
import { useChat } from "../chat/useChat";
import { useFollow } from "../chat/useFollow";
import { useDocumentTitle } from "../shell/title";
import { Composer } from "./Composer";
import { ExampleQuestions } from "./ExampleQuestions";
import { Handoff } from "./Handoff";
import type { Audience } from "./relevance";
import { Turn, type TurnActions } from "./Turn";

export const MISSING_CONVERSATION =
  "This conversation does not exist or was deleted, so it cannot take new questions.";

export function ChatConversation(props: {
  client: ApiClient;
  conversationId: string | null;
  /** Regenerate is offered only when the server's generator can answer differently (the
   * extractive generator gives the same answer every time). */
  regenerateVaries: boolean;
  /** "Talk to a person" is offered only when the server has a helpdesk to hand over to. */
  handoff?: boolean;
  /** Admins also see the retrieval path's name where members read plain words. */
  audience?: Audience;
  /** A first answer opened conversation `id`: it is now the open one. */
  onOpened: (id: string) => void;
  /** Start a new conversation (offered when the open one does not exist). */
  onNew: () => void;
  /** A turn was stored (the conversation list may reload). */
  onStored?: () => void;
  /** The last conversation renamed in the list; its new title shows if it is the open one. */
  renamed?: ConversationSummary | null;
}): ReactNode {
  const { client, conversationId } = props;
  const chat = useChat(client, conversationId, props.onOpened, props.onStored);
  const { state } = chat;
  const [draft, setDraft] = useState("");
  // Timestamps from today show the time only.
  const [now] = useState(() => new Date());
  const turnsList = useRef<HTMLOListElement>(null);
  const box = useRef<HTMLTextAreaElement>(null);
  const follow = useFollow(turnsList);
  // Retry, Regenerate, Stop and an example question remove the button that was pressed:
  // focus moves on to the answer they act on (not to the question box, which would open a
  // phone's keyboard over it).
  const focusNewest = useRef(false);
  useEffect(() => {
    if (!focusNewest.current) return;
    focusNewest.current = false;
    const answers = turnsList.current?.querySelectorAll<HTMLElement>("li.turn-assistant");
    answers?.[answers.length - 1]?.focus({ preventScroll: true });
  }, [state.turns]);

  const busy = state.streaming !== null;
  const load = state.load;

  const ask = (question: string): void => {
    follow.jump(false);
    void chat.ask(question).then((outcome) => {
      // Nothing was stored: the question comes back into an empty box, to send again or edit.
      if (outcome === "failed") setDraft((d) => (d === "" ? question : d));
    });
  };
  const send = (question: string): void => {
    setDraft("");
    ask(question);
  };
  const pick = (question: string): void => {
    focusNewest.current = true;
    ask(question);
  };

  const latest = latestAnswer(state.turns);
  const replaced = replacedAnswers(state.turns);
  const actions = (t: DisplayTurn): TurnActions => ({
    busy,
    latest: t === latest,
    regenerates: props.regenerateVaries,
    onRetry: (turn) => {
      const question = turn.request?.kind === "ask" ? turn.request.question : null;
      setDraft((d) => (d.trim() === question ? "" : d));
      follow.jump(false);
      focusNewest.current = true;
      void chat.retry(turn);
    },
    onRegenerate: () => {
      follow.jump(false);
      focusNewest.current = true;
      void chat.regenerate();
    },
    onRate: chat.rate,
  });

  const renamed = props.renamed;
  const title = renamed && renamed.id === state.conversationId ? renamed.title : state.title;
  const heading =
    load.kind === "missing"
      ? "Conversation not found"
      : title || (state.conversationId ? "Conversation" : "New conversation");
  useDocumentTitle(heading);
  const unavailable =
    load.kind === "missing"
      ? "This conversation cannot take new questions."
      : load.kind === "failed"
        ? "The conversation could not be loaded."
        : load.kind === "loading"
          ? "Loading the conversation…"
          : null;
  const empty = state.conversationId === null && state.turns.length === 0 && load.kind === "ready";

  return (
    <section className="chat" aria-labelledby="chat-title">
      <h1 id="chat-title" className="chat-title">
        {heading}
      </h1>
      {load.kind === "missing" && (
        <div className="chat-problem" role="alert">
          <p>{MISSING_CONVERSATION}</p>
          <button type="button" onClick={props.onNew}>
            Start a new conversation
          </button>
        </div>
      )}
      {load.kind === "failed" && (
        <div className="chat-problem" role="alert">
          <p>{load.problem.message}</p>
          {load.problem.retry && (
            <button type="button" onClick={chat.reload}>
              Retry
            </button>
          )}
        </div>
      )}
      {load.kind === "loading" && <p role="status">Loading conversation…</p>}
      <ol className="turns" aria-label="Messages" ref={turnsList}>
        {state.turns.map((t) => (
          <Turn
            key={t.key}
            turn={t}
            now={now}
            audience={props.audience}
            replaced={t.messageId !== null && replaced.has(t.messageId)}
            actions={actions(t)}
          />
        ))}
      </ol>
      {props.handoff &&
        state.conversationId !== null &&
        load.kind === "ready" &&
        state.turns.length > 0 && (
          <Handoff
            key={state.conversationId}
            client={client}
            conversationId={state.conversationId}
            turns={state.turns}
            busy={busy}
          />
        )}
      {empty && <ExampleQuestions client={client} onAsk={pick} />}
      <p className="visually-hidden" role="status" aria-live="polite">
        {state.status}
      </p>
      <div className="composer-dock">
        {follow.showJump && state.turns.length > 0 && (
          <button
            type="button"
            className="jump-latest"
            onClick={(e) => {
              // From the keyboard (no pointer: detail 0), focus goes on to the question box,
              // since the button goes away at the end.
              if (e.detail === 0) box.current?.focus({ preventScroll: true });
              follow.jump();
            }}
          >
            Jump to latest
          </button>
        )}
        <Composer
          ref={box}
          value={draft}
          onChange={setDraft}
          onSend={send}
          onStop={() => {
            focusNewest.current = true;
            chat.stop();
          }}
          busy={busy}
          unavailable={unavailable}
          loading={load.kind === "loading"}
        />
      </div>
    </section>
  );
}
