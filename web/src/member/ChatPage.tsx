/**
 * The member's chat: the turns of the open conversation and the composer (the shell shows the
 * conversation list beside it).
 * Answers stream in token by token; the final event replaces the streamed text with the
 * server's answer and brings the sources. A reload of /c/<id> rebuilds the same view from
 * history.
 */
import { useCallback, useEffect, useRef, useState, type ReactNode } from "react";

import type { ApiClient } from "../api/client";
import type {
  AnswerStatus,
  ChatResponse,
  ConversationSummary,
  HybridPath,
  Message,
  Source,
} from "../api/types";
import { navigate } from "../router";
import { useDocumentTitle } from "../shell/title";
import { Composer } from "./Composer";
import { Turn } from "./Turn";

export interface DisplayTurn {
  key: string;
  role: "user" | "assistant";
  content: string;
  sources: Source[];
  hybridPath: HybridPath;
  /** Assistant turns: known once the answer is final (or loaded from history). */
  answerStatus: AnswerStatus | null;
  pending: boolean;
  error: string | null;
}

let localKey = 0;
function nextKey(): string {
  localKey += 1;
  return `local-${localKey}`;
}

/** A stored message (history reload) as a turn. */
export function fromMessage(m: Message): DisplayTurn {
  return {
    key: m.id,
    role: m.role,
    content: m.content,
    sources: m.sources ?? [],
    hybridPath: m.hybrid_path ?? null,
    answerStatus: m.role === "assistant" ? (m.answer_status ?? "answered") : null,
    pending: false,
    error: null,
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

export function ChatPage(props: {
  client: ApiClient;
  conversationId: string | null;
  /** The last conversation renamed in the list; its new title shows if it is the open one. */
  renamed?: ConversationSummary | null;
  /** A turn was stored (the conversation list reloads). */
  onStored?: () => void;
}): ReactNode {
  const { client, conversationId, renamed, onStored } = props;
  const [turns, setTurns] = useState<DisplayTurn[]>([]);
  const [title, setTitle] = useState<string | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [loading, setLoading] = useState(false);
  const [busy, setBusy] = useState(false);
  const [status, setStatus] = useState("");
  // The conversation the view currently shows; a route change to it (after the stream's meta
  // event) must not reload it from history mid-stream.
  const shownId = useRef<string | null>(null);

  useEffect(() => {
    if (conversationId === shownId.current) return;
    shownId.current = conversationId;
    setLoadError(null);
    if (conversationId === null) {
      // The view resets when the route leaves the conversation.
      // eslint-disable-next-line react-hooks/set-state-in-effect
      setTurns([]);
      setTitle(null);
      return;
    }
    let live = true;
    setLoading(true);
    setTurns([]);
    client.conversation(conversationId).then(
      (conv) => {
        if (!live) return;
        setTitle(conv.title);
        setTurns(conv.messages.map(fromMessage));
        setLoading(false);
      },
      (err: unknown) => {
        if (!live) return;
        setLoadError((err as Error).message);
        setLoading(false);
      },
    );
    return () => {
      live = false;
    };
  }, [client, conversationId]);

  const shownTitle = renamed && renamed.id === conversationId ? renamed.title : title;
  const heading = shownTitle || (conversationId ? "Conversation" : "New conversation");
  useDocumentTitle(heading);

  const patch = useCallback((key: string, change: Partial<DisplayTurn>) => {
    setTurns((ts) => ts.map((t) => (t.key === key ? { ...t, ...change } : t)));
  }, []);

  const send = useCallback(
    async (message: string): Promise<void> => {
      const answerKey = nextKey();
      const blank = {
        sources: [],
        hybridPath: null,
        answerStatus: null,
        pending: false,
        error: null,
      };
      setTurns((ts) => [
        ...ts,
        { ...blank, key: nextKey(), role: "user", content: message },
        { ...blank, key: answerKey, role: "assistant", content: "", pending: true },
      ]);
      setBusy(true);
      setStatus("Answering…");
      if (shownId.current === null)
        setTitle(message.length > 80 ? `${message.slice(0, 79)}…` : message);
      let finished = false;
      try {
        await client.chatStream({ message, conversation_id: shownId.current }, (event) => {
          switch (event.event) {
            case "meta": {
              const wasNew = shownId.current === null;
              shownId.current = event.data.conversation_id;
              navigate(`/c/${encodeURIComponent(event.data.conversation_id)}`, wasNew);
              break;
            }
            case "token":
              setTurns((ts) =>
                ts.map((t) =>
                  t.key === answerKey ? { ...t, content: t.content + event.data.delta } : t,
                ),
              );
              break;
            case "final":
              finished = true;
              patch(answerKey, finalFields(event.data));
              setStatus("Answer ready.");
              break;
            case "error":
              finished = true;
              patch(answerKey, { pending: false, error: event.data.detail });
              setStatus("The answer failed.");
              break;
          }
        });
        if (!finished) {
          patch(answerKey, { pending: false, error: "The answer stream ended early." });
        }
      } catch (err) {
        patch(answerKey, { pending: false, error: (err as Error).message });
        setStatus("The answer failed.");
      } finally {
        setBusy(false);
        onStored?.();
      }
    },
    [client, patch, onStored],
  );

  return (
    <section className="chat" aria-labelledby="chat-title">
      <h1 id="chat-title" className="chat-title">
        {heading}
      </h1>
      {loadError && (
        <p className="error" role="alert">
          Could not load this conversation: {loadError}
        </p>
      )}
      {loading && <p role="status">Loading conversation…</p>}
      <ol className="turns" aria-label="Messages">
        {turns.map((t) => (
          <Turn key={t.key} turn={t} />
        ))}
      </ol>
      {turns.length === 0 && !loading && !loadError && (
        <p className="empty-hint">Ask a question about the knowledge base to start.</p>
      )}
      <p className="visually-hidden" role="status" aria-live="polite">
        {status}
      </p>
      <Composer onSend={(message) => void send(message)} busy={busy} />
    </section>
  );
}
