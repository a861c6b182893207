/**
 * Resolution (admin): the conversations of each day or week by outcome, drawn as stacked bars
 * (inline SVG, colours from the stylesheet), the counts and rates in a table, and the
 * conversations behind the outcome picked. "Resolved" means no sign of failure, not a
 * confirmed fix; a conversation is `open` until its window closes.
 */
import { useState, type ReactNode } from "react";

import type { ApiClient } from "../api/client";
import type { Outcome, ResolutionPeriod } from "../api/types";
import { LoadState } from "../components/LoadState";
import { NavLink } from "../components/NavLink";
import { formatDate, formatRate } from "../components/format";
import { useLoad } from "../components/useLoad";
import { conversationPath } from "./AdminGaps";
import { DataTable, type Column } from "./DataTable";
import { ChartFrame } from "./PerformanceChart";

export const OUTCOMES: readonly { value: Outcome; label: string }[] = [
  { value: "resolved", label: "Resolved" },
  { value: "escalated", label: "Escalated to a person" },
  { value: "unresolved", label: "Unresolved" },
  { value: "abandoned", label: "Abandoned" },
  { value: "open", label: "Open (window not closed)" },
];

export const NO_CONVERSATIONS = "No conversations yet: outcomes appear as members ask questions.";

const BAR = 22;
const LABEL_PX = 90;

/** Stacked bars, one row per period (newest first), one segment per outcome. */
export function OutcomeBars(props: {
  periods: readonly ResolutionPeriod[];
  width: number;
}): ReactNode {
  const rows = props.periods.slice(0, 16);
  const most = Math.max(1, ...rows.map((p) => OUTCOMES.reduce((n, o) => n + p.counts[o.value], 0)));
  const room = Math.max(40, props.width - LABEL_PX - 40);
  const height = rows.length * (BAR + 6) + 6;
  return (
    <svg
      className="chart resolution-chart"
      viewBox={`0 0 ${props.width} ${height}`}
      width={props.width}
      height={height}
      role="img"
      aria-label="Conversations per period by outcome"
    >
      {rows.map((p, i) => {
        const y = 6 + i * (BAR + 6);
        let x = LABEL_PX;
        const total = OUTCOMES.reduce((n, o) => n + p.counts[o.value], 0);
        return (
          <g key={p.period_start} data-period={p.period_start}>
            <text x={0} y={y + BAR / 2 + 4}>
              {p.period_start}
            </text>
            {OUTCOMES.map((o) => {
              const w = (p.counts[o.value] / most) * room;
              const segment = (
                <rect
                  key={o.value}
                  className={`bar-outcome bar-${o.value}`}
                  x={x}
                  y={y}
                  width={w}
                  height={BAR}
                >
                  <title>{`${o.label}: ${p.counts[o.value]}`}</title>
                </rect>
              );
              x += w;
              return segment;
            })}
            <text className="chart-value" x={x + 4} y={y + BAR / 2 + 4}>
              {total}
            </text>
          </g>
        );
      })}
    </svg>
  );
}

const PERIOD_COLUMNS: readonly Column<ResolutionPeriod>[] = [
  { header: "Period", cell: (p) => p.period_start || "All" },
  ...OUTCOMES.map((o): Column<ResolutionPeriod> => ({
    header: o.label,
    numeric: true,
    cell: (p) => p.counts[o.value],
  })),
  {
    header: "Resolution rate",
    numeric: true,
    testId: "resolution-rate",
    cell: (p) => formatRate(p.resolution_rate),
  },
  { header: "Escalation rate", numeric: true, cell: (p) => formatRate(p.escalation_rate) },
];

function ConversationsBehind(props: { client: ApiClient; outcome: Outcome }): ReactNode {
  const state = useLoad(
    () => props.client.outcomeConversations(props.outcome),
    [props.client, props.outcome],
  );
  return (
    <LoadState state={state} what="conversations">
      {(items) => (
        <DataTable
          label="Conversations with this outcome"
          className="outcome-conversations"
          columns={[
            {
              header: "Conversation",
              cell: (c) => (
                <NavLink to={conversationPath(c.conversation_id)}>{c.title || "Untitled"}</NavLink>
              ),
            },
            { header: "Member", className: "user-cell", cell: (c) => c.user_name },
            { header: "Began", cell: (c) => formatDate(c.created_at) },
            { header: "Last message", cell: (c) => formatDate(c.last_at) },
          ]}
          rows={items}
          rowKey={(c) => c.conversation_id}
          empty="No conversation has this outcome."
        />
      )}
    </LoadState>
  );
}

export function AdminResolution(props: { client: ApiClient }): ReactNode {
  const [period, setPeriod] = useState<"day" | "week">("week");
  const [outcome, setOutcome] = useState<Outcome>("escalated");
  const state = useLoad(() => props.client.resolution(period), [props.client, period]);
  return (
    <section className="admin-page">
      <h1>Resolution</h1>
      <p className="muted">
        Resolved means no sign of failure (no handoff, no “not found”, no “Not helpful”) once the
        conversation has been quiet for its window; it is not a confirmed fix.
      </p>
      <div className="filters">
        <label htmlFor="resolution-period">Per</label>
        <select
          id="resolution-period"
          value={period}
          onChange={(e) => setPeriod(e.target.value as "day" | "week")}
        >
          <option value="week">Week</option>
          <option value="day">Day</option>
        </select>
      </div>
      <LoadState state={state} what="the resolution report">
        {(report) =>
          report.totals === null ? (
            <p>{NO_CONVERSATIONS}</p>
          ) : (
            <>
              <p data-testid="resolution-totals">
                {report.totals.decided} decided conversations:{" "}
                {formatRate(report.totals.resolution_rate)} resolved,{" "}
                {formatRate(report.totals.escalation_rate)} escalated to a person.
              </p>
              <figure className="resolution-figure">
                <figcaption>Conversations per {period} by outcome</figcaption>
                <ChartFrame>
                  {(width) => <OutcomeBars periods={report.periods} width={width} />}
                </ChartFrame>
                <ul className="chart-legend">
                  {OUTCOMES.map((o) => (
                    <li key={o.value}>
                      <span className={`swatch bar-${o.value}`} aria-hidden="true" />
                      {o.label}
                    </li>
                  ))}
                </ul>
              </figure>
              <DataTable
                label="Outcomes per period"
                className="resolution-table"
                columns={PERIOD_COLUMNS}
                rows={[...report.periods, report.totals]}
                rowKey={(p) => p.period_start || "all"}
                empty={NO_CONVERSATIONS}
              />
            </>
          )
        }
      </LoadState>
      <h2>The conversations behind a number</h2>
      <div className="filters">
        <label htmlFor="resolution-outcome">Outcome</label>
        <select
          id="resolution-outcome"
          value={outcome}
          onChange={(e) => setOutcome(e.target.value as Outcome)}
        >
          {OUTCOMES.map((o) => (
            <option key={o.value} value={o.value}>
              {o.label}
            </option>
          ))}
        </select>
      </div>
      <ConversationsBehind client={props.client} outcome={outcome} />
    </section>
  );
}
