/** The audit log (admin): who read or changed which member's data, when and from where,
 * newest first, with how long members' words and the log itself are kept (docs/privacy.md).
 * The action shown is in the address (`/admin/audit?action=erasure`): it survives a reload and
 * can be linked. */
import { useState, type ReactNode } from "react";

import type { ApiClient } from "../api/client";
import type { AuditAction, AuditEntryPublic, AuditPage, RetentionSettings } from "../api/types";
import { LoadState } from "../components/LoadState";
import { Pager } from "../components/Pager";
import { formatDate } from "../components/format";
import { useLoad } from "../components/useLoad";
import { DataTable, type Column } from "./DataTable";

const PAGE = 50;

export const NO_AUDIT_LINES =
  "Nothing in the audit log yet: reads of members' conversations, exports, erasures and card " +
  "changes appear here.";

/** The actions in words, for the filter and the table. */
export const ACTIONS: Record<AuditAction, string> = {
  "conversation.read": "Read a conversation",
  "conversations.list": "Listed the conversations",
  "handoffs.read": "Read the handoffs",
  "feedback.read": "Read the feedback report",
  "knowledge_gaps.read": "Read the knowledge gaps",
  "retrieval_events.read": "Read the retrieval events",
  "exposure.read": "Read a member's exposure",
  export: "Export (a member's data, or the test questions)",
  erasure: "Erasure",
  "cards.change": "Cards changed",
  "sources.change": "Sources changed",
  retention: "Retention run",
  "test_questions.change": "Test questions changed",
};

/** The words for a filter that matches no line, when the log itself has some. */
export function noLinesOf(action: AuditAction): string {
  return `No line of this kind: nothing recorded as “${ACTIONS[action]}” yet.`;
}

/** What the table says when it has no line: the log is empty, or only the filter matched
 * nothing. */
export function emptyAuditText(action: AuditAction | ""): string {
  return action === "" ? NO_AUDIT_LINES : noLinesOf(action);
}

/** The action filter an address's query string names ("" for everything, and for an action
 * this page does not know). */
export function actionFromSearch(search: string): AuditAction | "" {
  const named = new URLSearchParams(search).get("action") ?? "";
  return Object.hasOwn(ACTIONS, named) ? (named as AuditAction) : "";
}

/** The query string for the action filter (empty for everything). */
export function searchForAction(action: AuditAction | ""): string {
  return action === "" ? "" : `?${new URLSearchParams({ action }).toString()}`;
}

/** An action's words, or the action itself for one this page does not know. */
export function actionText(action: string): string {
  return (ACTIONS as Record<string, string>)[action] ?? action;
}

/** A retention window in words: "90 days", or "kept until erased" / "kept" when unset. */
export function keptFor(days: number | null, unset: string): string {
  if (days === null) return unset;
  return days === 1 ? "1 day" : `${days} days`;
}

export function RetentionSummary(props: { settings: RetentionSettings }): ReactNode {
  const s = props.settings;
  return (
    <dl className="retention-settings" data-testid="retention-settings">
      <dt>Conversations' words</dt>
      <dd>{keptFor(s.retention_days, "kept until a member's data is erased")}</dd>
      <dt>Audit log</dt>
      <dd>{keptFor(s.audit_retention_days, "kept")}</dd>
    </dl>
  );
}

/** Most characters of a line's details the table shows (the API has them whole). */
const DETAIL_CHARS = 200;

/** A line's details as the table shows them: `key: value` pairs, each value as JSON
 * (`{"disabled": true}` -> `disabled: true`), cut at `DETAIL_CHARS`; "—" for none. */
export function detailText(detail: Readonly<Record<string, unknown>>): string {
  const pairs = Object.entries(detail).map(([k, v]) => `${k}: ${JSON.stringify(v)}`);
  const text = pairs.join("; ");
  if (text === "") return "—";
  return text.length > DETAIL_CHARS ? `${text.slice(0, DETAIL_CHARS - 1)}…` : text;
}

const AUDIT_COLUMNS: readonly Column<AuditEntryPublic>[] = [
  { header: "When", cell: (e) => formatDate(e.at) },
  { header: "Who", className: "user-cell", cell: (e) => e.actor },
  { header: "How", cell: (e) => e.via },
  { header: "What", testId: "audit-action", cell: (e) => actionText(e.action) },
  { header: "Of", className: "mono", cell: (e) => e.target },
  { header: "Details", className: "audit-detail", cell: (e) => detailText(e.detail) },
  { header: "From", className: "mono", cell: (e) => e.address ?? "—" },
];

export function AuditTable(props: {
  page: AuditPage;
  onPage: (offset: number) => void;
  /** The action filter the page was read with ("": everything). */
  action?: AuditAction | "";
}): ReactNode {
  const page = props.page;
  return (
    <DataTable
      label="Audit log"
      className="audit-table"
      columns={AUDIT_COLUMNS}
      rows={page.entries}
      rowKey={(e) => String(e.id)}
      empty={emptyAuditText(props.action ?? "")}
      header={
        <p className="muted" role="status">
          {page.total} line{page.total === 1 ? "" : "s"}
        </p>
      }
      footer={
        <Pager
          offset={page.offset}
          pageSize={page.limit}
          total={page.total}
          onChange={props.onPage}
        />
      }
    />
  );
}

export function AdminAudit(props: { client: ApiClient }): ReactNode {
  const [action, setAction] = useState<AuditAction | "">(() =>
    actionFromSearch(window.location.search),
  );
  const [offset, setOffset] = useState(0);
  const settings = useLoad(() => props.client.retention(), [props.client]);
  const page = useLoad(
    () => props.client.auditLog({ action: action || undefined, limit: PAGE, offset }),
    [props.client, action, offset],
  );
  return (
    <section className="admin-page">
      <h1>Audit log</h1>
      <LoadState state={settings} what="the retention settings">
        {(s) => <RetentionSummary settings={s} />}
      </LoadState>
      <div className="filters">
        <label htmlFor="audit-action">Show</label>
        <select
          id="audit-action"
          value={action}
          onChange={(e) => {
            const chosen = e.target.value as AuditAction | "";
            setAction(chosen);
            setOffset(0);
            // In the address, so a reload keeps it and the view can be linked.
            const url = `${window.location.pathname}${searchForAction(chosen)}`;
            window.history.replaceState(window.history.state, "", url);
          }}
        >
          <option value="">Everything</option>
          {Object.entries(ACTIONS).map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </select>
      </div>
      <LoadState state={page} what="the audit log">
        {(p) => <AuditTable page={p} onPage={setOffset} action={action} />}
      </LoadState>
    </section>
  );
}
