/** Every member's conversations (admin), newest first, with who had them. */
import type { ReactNode } from "react";

import type { ApiClient } from "../api/client";
import type { AdminConversationSummary } from "../api/types";
import { LoadState } from "../components/LoadState";
import { NavLink } from "../components/NavLink";
import { formatDate } from "../components/format";
import { useLoad } from "../components/useLoad";
import { conversationPath } from "./AdminGaps";
import { EmptyState } from "./EmptyState";
import { ScrollBox } from "./ScrollBox";
import { userName } from "./users";

export const NO_CONVERSATIONS = "No conversations yet: they appear here as members ask questions.";

export function AdminConversations(props: { client: ApiClient }): ReactNode {
  const state = useLoad(() => props.client.adminConversations(), [props.client]);
  return (
    <section className="admin-page">
      <h1>Conversations</h1>
      <LoadState state={state} what="conversations">
        {(items) => <ConversationsTable items={items} />}
      </LoadState>
    </section>
  );
}

export function ConversationsTable(props: {
  items: readonly AdminConversationSummary[];
}): ReactNode {
  if (props.items.length === 0) return <EmptyState>{NO_CONVERSATIONS}</EmptyState>;
  const newestFirst = [...props.items].sort((a, b) => (a.updated_at < b.updated_at ? 1 : -1));
  return (
    <ScrollBox label="Conversations">
      <table className="conversations-table">
        <thead>
          <tr>
            <th scope="col">Title</th>
            <th scope="col">User</th>
            <th scope="col" className="num">
              Messages
            </th>
            <th scope="col">Updated</th>
          </tr>
        </thead>
        <tbody>
          {newestFirst.map((c) => (
            <tr key={c.id}>
              <td>
                <NavLink to={conversationPath(c.id)}>{c.title || "Untitled"}</NavLink>
                {c.hidden_at && (
                  <>
                    {" "}
                    <span className="badge badge-not-found" data-testid="conversation-hidden">
                      deleted by the member
                    </span>
                  </>
                )}
              </td>
              <td className="user-cell">{userName(c)}</td>
              <td className="num">{c.message_count}</td>
              <td>{formatDate(c.updated_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollBox>
  );
}
