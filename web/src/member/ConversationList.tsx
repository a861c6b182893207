/** The member's own conversations, newest first. Buttons, not links: the member view links out
 * only to verified sources. */
import { useEffect, useState, type ReactNode } from "react";

import type { ApiClient } from "../api/client";
import type { ConversationSummary } from "../api/types";
import { formatDate } from "../components/format";
import { navigate } from "../router";

export function ConversationList(props: {
  client: ApiClient;
  currentId: string | null;
  version: number;
  disabled: boolean;
}): ReactNode {
  const { client, version } = props;
  const [items, setItems] = useState<ConversationSummary[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    client.conversations().then(
      (list) => {
        if (!live) return;
        setItems([...list].sort((a, b) => (a.updated_at < b.updated_at ? 1 : -1)));
        setError(null);
      },
      (err: unknown) => live && setError((err as Error).message),
    );
    return () => {
      live = false;
    };
  }, [client, version]);

  if (error)
    return (
      <p className="error" role="alert">
        {error}
      </p>
    );
  if (items === null) return <p role="status">Loading…</p>;
  if (items.length === 0) return <p className="muted">No conversations yet.</p>;
  return (
    <ul className="conversation-list">
      {items.map((c) => (
        <li key={c.id}>
          <button
            type="button"
            className="conversation-item"
            aria-current={c.id === props.currentId ? "page" : undefined}
            disabled={props.disabled}
            onClick={() => navigate(`/c/${encodeURIComponent(c.id)}`)}
          >
            <span className="conversation-title">{c.title || "Untitled"}</span>
            <span className="conversation-meta">
              {formatDate(c.updated_at)} · {c.message_count} messages
            </span>
          </button>
        </li>
      ))}
    </ul>
  );
}
