/** Every member's conversations (admin), newest first, with who had them, whether their
 * answers were found and how the member rated them; filtered to the ones worth a look. */
import { useState, type ReactNode } from "react";

import type { ApiClient } from "../api/client";
import type { AdminConversationSummary } from "../api/types";
import { LoadState } from "../components/LoadState";
import { NavLink } from "../components/NavLink";
import { formatDate } from "../components/format";
import { useLoad } from "../components/useLoad";
import { conversationPath } from "./AdminGaps";
import { DataTable, type Column } from "./DataTable";
import { Headline } from "./Headline";
import { userName } from "./users";

export const NO_CONVERSATIONS = "No conversations yet: they appear here as members ask questions.";

export type ConversationFilter = "all" | "not-found" | "rated-down";

const FILTERS: { value: ConversationFilter; label: string }[] = [
  { value: "all", label: "All" },
  { value: "not-found", label: "With a “not found” answer" },
  { value: "rated-down", label: "Rated “Not helpful”" },
];

/** Whether conversation `c` passes `filter`. */
export function passes(c: AdminConversationSummary, filter: ConversationFilter): boolean {
  if (filter === "not-found") return c.not_found_answers > 0;
  if (filter === "rated-down") return c.rated_down > 0;
  return true;
}

/** The status column: whether every answer came from the knowledge base. */
export function statusText(c: AdminConversationSummary): string {
  if (c.not_found_answers === 0) return "answered";
  return c.not_found_answers === 1 ? "1 not found" : `${c.not_found_answers} not found`;
}

/** The rating column: the member's ratings in words, "—" when none. */
export function ratingText(c: AdminConversationSummary): string {
  const parts = [
    c.rated_up > 0 ? `${c.rated_up} helpful` : "",
    c.rated_down > 0 ? `${c.rated_down} not helpful` : "",
  ].filter(Boolean);
  return parts.length > 0 ? parts.join(", ") : "—";
}

export function AdminConversations(props: { client: ApiClient }): ReactNode {
  const state = useLoad(() => props.client.adminConversations(), [props.client]);
  const [filter, setFilter] = useState<ConversationFilter>("all");
  return (
    <section className="admin-page">
      <h1>Conversations</h1>
      <Headline client={props.client} />
      <div className="filters">
        <label htmlFor="conversation-filter">Show</label>
        <select
          id="conversation-filter"
          value={filter}
          onChange={(e) => setFilter(e.target.value as ConversationFilter)}
        >
          {FILTERS.map((f) => (
            <option key={f.value} value={f.value}>
              {f.label}
            </option>
          ))}
        </select>
      </div>
      <LoadState state={state} what="conversations">
        {(items) => <ConversationsTable items={items} filter={filter} />}
      </LoadState>
    </section>
  );
}

const CONVERSATION_COLUMNS: readonly Column<AdminConversationSummary>[] = [
  {
    header: "Title",
    cell: (c) => (
      <>
        <NavLink to={conversationPath(c.id)}>{c.title || "Untitled"}</NavLink>
        {c.hidden_at && (
          <>
            {" "}
            <span className="badge badge-not-found" data-testid="conversation-hidden">
              deleted by the member
            </span>
          </>
        )}
      </>
    ),
  },
  { header: "User", className: "user-cell", cell: userName },
  { header: "Messages", numeric: true, cell: (c) => c.message_count },
  { header: "Status", testId: "conversation-status", cell: statusText },
  { header: "Rating", testId: "conversation-rating", cell: ratingText },
  { header: "Updated", cell: (c) => formatDate(c.updated_at) },
];

export function ConversationsTable(props: {
  items: readonly AdminConversationSummary[];
  filter?: ConversationFilter;
}): ReactNode {
  const filter = props.filter ?? "all";
  const shown = props.items.filter((c) => passes(c, filter));
  const newestFirst = [...shown].sort((a, b) => (a.updated_at < b.updated_at ? 1 : -1));
  return (
    <DataTable
      label="Conversations"
      className="conversations-table"
      columns={CONVERSATION_COLUMNS}
      rows={newestFirst}
      rowKey={(c) => c.id}
      empty={props.items.length === 0 ? NO_CONVERSATIONS : "No conversations match this filter."}
    />
  );
}
