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
import { ScrollBox } from "./ScrollBox";

function stage(rank: number | null | undefined, score: number | null | undefined): string {
  if (rank === null || rank === undefined) return "—";
  return `#${rank} (${formatNumber(score, 3)})`;
}

export function EventsTable(props: {
  events: readonly RetrievalEvent[];
  /** Link each query to its conversation (not wanted inside that conversation's own page). */
  linkConversations?: boolean;
}): ReactNode {
  return (
    <ScrollBox label="Retrieval events">
      <table className="events-table">
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Card</th>
            <th scope="col">Query</th>
            <th scope="col">Final</th>
            <th scope="col">Dense</th>
            <th scope="col">BM25</th>
            <th scope="col">RRF</th>
            <th scope="col">Rerank (logit)</th>
            <th scope="col">Path</th>
            <th scope="col">Cited</th>
            <th scope="col">Kind</th>
          </tr>
        </thead>
        <tbody>
          {props.events.map((e, i) => (
            <tr key={`${e.id ?? ""}-${e.message_id ?? ""}-${e.card_id}-${i}`}>
              <td>{formatDate(e.created_at)}</td>
              <td className="card-cell">
                <CardLink id={e.card_id} />
              </td>
              <td className="query-cell">
                {props.linkConversations && e.conversation_id ? (
                  <NavLink to={conversationPath(e.conversation_id)}>
                    {e.query || "(open the conversation)"}
                  </NavLink>
                ) : (
                  e.query || "—"
                )}
              </td>
              <td className="num">{e.final_rank ?? "—"}</td>
              <td>{stage(e.dense_rank, e.dense_score)}</td>
              <td>{stage(e.bm25_rank, e.bm25_score)}</td>
              <td>{stage(e.rrf_rank, e.rrf_score)}</td>
              <td>{stage(e.rerank_rank, e.rerank_logit)}</td>
              <td className="path-cell">
                <code>{e.hybrid_path ?? "none"}</code>
              </td>
              <td>{e.cited ? "yes" : "no"}</td>
              <td>{e.is_external ? "external" : "internal"}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollBox>
  );
}
