/** The handoff outbox (admin): members' requests for a person, newest first, with where each
 * one's delivery to the helpdesk stands (pending with its next attempt, delivered, or failed
 * with the last error) and how many attempts it took. */
import { useState, type ReactNode } from "react";

import type { ApiClient } from "../api/client";
import type { AdminHandoff, HandoffStatus } from "../api/types";
import { LoadState } from "../components/LoadState";
import { NavLink } from "../components/NavLink";
import { formatDate } from "../components/format";
import { useLoad } from "../components/useLoad";
import { conversationPath } from "./AdminGaps";
import { DataTable, type Column } from "./DataTable";

export const NO_HANDOFFS =
  "No handoffs yet: they appear here when a member asks to talk to a person.";

const FILTERS: { value: HandoffStatus | "all"; label: string }[] = [
  { value: "all", label: "All" },
  { value: "pending", label: "Pending" },
  { value: "failed", label: "Failed" },
  { value: "delivered", label: "Delivered" },
];

/** Where a handoff's delivery stands, in words. */
export function deliveryText(h: AdminHandoff): string {
  if (h.status === "delivered") return `delivered ${formatDate(h.delivered_at ?? h.created_at)}`;
  if (h.status === "failed") return `failed: ${h.last_error ?? "refused"}`;
  const next = h.next_attempt_at ? `, next attempt ${formatDate(h.next_attempt_at)}` : "";
  return h.attempts === 0 ? "pending" : `pending (${h.last_error ?? "not accepted"})${next}`;
}

const COLUMNS: readonly Column<AdminHandoff>[] = [
  { header: "Asked", cell: (h) => formatDate(h.created_at) },
  { header: "Member", className: "user-cell", cell: (h) => h.user_name },
  {
    header: "Conversation",
    cell: (h) => <NavLink to={conversationPath(h.conversation_id)}>Open</NavLink>,
  },
  { header: "Message", cell: (h) => h.message ?? "—" },
  {
    header: "Delivery",
    testId: "handoff-status",
    cell: (h) => (
      <span className={`badge badge-handoff-${h.status}`} title={deliveryText(h)}>
        {deliveryText(h)}
      </span>
    ),
  },
  { header: "Attempts", numeric: true, cell: (h) => h.attempts },
];

export function AdminHandoffs(props: { client: ApiClient }): ReactNode {
  const [filter, setFilter] = useState<HandoffStatus | "all">("all");
  const state = useLoad(
    () => props.client.adminHandoffs(filter === "all" ? null : filter),
    [props.client, filter],
  );
  return (
    <section className="admin-page">
      <h1>Handoffs</h1>
      <div className="filters">
        <label htmlFor="handoff-filter">Show</label>
        <select
          id="handoff-filter"
          value={filter}
          onChange={(e) => setFilter(e.target.value as HandoffStatus | "all")}
        >
          {FILTERS.map((f) => (
            <option key={f.value} value={f.value}>
              {f.label}
            </option>
          ))}
        </select>
      </div>
      <LoadState state={state} what="handoffs">
        {(page) => (
          <DataTable
            label="Handoffs"
            className="handoffs-table"
            columns={COLUMNS}
            rows={page.handoffs}
            rowKey={(h) => h.id}
            rowData={(h) => ({ handoff: h.id })}
            header={
              <p className="table-summary" data-testid="handoff-counts">
                {page.pending} pending, {page.failed} failed, {page.delivered} delivered
              </p>
            }
            empty={filter === "all" ? NO_HANDOFFS : "No handoffs with this status."}
          />
        )}
      </LoadState>
    </section>
  );
}
