/**
 * Retrieval events as a table: one row per retrieved card per turn, the query retrieval ran
 * with, ranks and scores by stage. Cards link to their page; in the event browser each query
 * links to the conversation it was asked in.
 */
import type { ReactNode } from "react";

import type { RetrievalEvent } from "../api/types";
import { NavLink } from "../components/NavLink";
import { formatDate, formatNumber } from "../components/format";
import { CardLink } from "./AdminCard";
import { conversationPath } from "./AdminGaps";
import { DataTable, type Column } from "./DataTable";

function stage(rank: number | null | undefined, score: number | null | undefined): string {
  if (rank === null || rank === undefined) return "—";
  return `#${rank} (${formatNumber(score, 3)})`;
}

function eventColumns(linkConversations: boolean): readonly Column<RetrievalEvent>[] {
  return [
    { header: "When", cell: (e) => formatDate(e.created_at) },
    { header: "Card", className: "card-cell", cell: (e) => <CardLink id={e.card_id} /> },
    {
      header: "Query",
      className: "query-cell",
      cell: (e) =>
        linkConversations && e.conversation_id ? (
          <NavLink to={conversationPath(e.conversation_id)}>
            {e.query || "(open the conversation)"}
          </NavLink>
        ) : (
          e.query || "—"
        ),
    },
    { header: "Final", numeric: true, cell: (e) => e.final_rank ?? "—" },
    { header: "Dense", cell: (e) => stage(e.dense_rank, e.dense_score) },
    { header: "BM25", cell: (e) => stage(e.bm25_rank, e.bm25_score) },
    { header: "RRF", cell: (e) => stage(e.rrf_rank, e.rrf_score) },
    { header: "Rerank (logit)", cell: (e) => stage(e.rerank_rank, e.rerank_logit) },
    { header: "Path", className: "path-cell", cell: (e) => <code>{e.hybrid_path ?? "none"}</code> },
    { header: "Cited", cell: (e) => (e.cited ? "yes" : "no") },
    { header: "Kind", cell: (e) => (e.is_external ? "external" : "internal") },
  ];
}

export function EventsTable(props: {
  events: readonly RetrievalEvent[];
  /** What is said when there is no event. */
  empty: ReactNode;
  /** Link each query to its conversation (not wanted inside that conversation's own page). */
  linkConversations?: boolean;
}): ReactNode {
  return (
    <DataTable
      label="Retrieval events"
      className="events-table"
      columns={eventColumns(props.linkConversations ?? false)}
      rows={props.events}
      rowKey={(e, i) => `${e.id ?? ""}-${e.message_id ?? ""}-${e.card_id}-${i}`}
      empty={props.empty}
    />
  );
}
