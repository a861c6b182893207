/**
 * Resolution (admin): the conversations of each day or week by outcome, drawn as stacked bars
 * (inline SVG, colours from the stylesheet), the counts and rates in a table, the outcomes per
 * top card and per knowledge-gap group, and the conversations behind the outcome (and card
 * or knowledge-gap group) picked. "Resolved" means no sign of failure, not a
 * confirmed fix; a conversation is `open` until its window closes.
 */
import { useState, type ReactNode } from "react";

import type { ApiClient } from "../api/client";
import type {
  CardResolution,
  GapResolution,
  Outcome,
  OutcomeCounts,
  ResolutionPeriod,
} from "../api/types";
import { LoadState } from "../components/LoadState";
import { NavLink } from "../components/NavLink";
import { formatDate, formatRate } from "../components/format";
import { useLoad, type Loaded } from "../components/useLoad";
import { CardLink } from "./AdminCard";
import { conversationPath } from "./AdminGaps";
import { DataTable, type Column } from "./DataTable";
import { ChartFrame } from "./PerformanceChart";
import { StoredWords, removalOf } from "./removed";

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

/** The outcome counts and the resolution and escalation rates of a group's conversations. */
interface Outcomes {
  counts: OutcomeCounts;
  resolution_rate: number | null;
  escalation_rate: number | null;
}

function outcomeColumns<T extends Outcomes>(): Column<T>[] {
  return [
    ...OUTCOMES.map((o): Column<T> => ({
      header: o.label,
      numeric: true,
      cell: (r) => r.counts[o.value],
    })),
    {
      header: "Resolution rate",
      numeric: true,
      testId: "resolution-rate",
      cell: (r) => formatRate(r.resolution_rate),
    },
    { header: "Escalation rate", numeric: true, cell: (r) => formatRate(r.escalation_rate) },
  ];
}

const PERIOD_COLUMNS: readonly Column<ResolutionPeriod>[] = [
  { header: "Period", cell: (p) => p.period_start || "All" },
  ...outcomeColumns<ResolutionPeriod>(),
];

export const NO_TOP_CARDS = "No conversation has a top card yet: no answer retrieved a card.";
export const NO_GAP_GROUPS = "No knowledge gap and no question answered badly yet.";

/** Outcomes per top card; "Conversations" picks the card whose conversations are listed. */
export function CardResolutionTable(props: {
  rows: readonly CardResolution[];
  onPick: (cardId: string) => void;
}): ReactNode {
  const columns: Column<CardResolution>[] = [
    {
      header: "Top card",
      cell: (r) => (
        <CardLink id={r.card_id}>{r.title ?? <code>{`${r.card_id} (removed)`}</code>}</CardLink>
      ),
    },
    {
      header: "Conversations",
      numeric: true,
      cell: (r) => (
        <button
          type="button"
          className="link-button"
          aria-label={`Conversations whose top card is ${r.title ?? r.card_id}`}
          onClick={() => props.onPick(r.card_id)}
        >
          {r.conversations}
        </button>
      ),
    },
    ...outcomeColumns<CardResolution>(),
  ];
  return (
    <DataTable
      label="Outcomes per top card"
      className="resolution-cards"
      columns={columns}
      rows={props.rows}
      rowKey={(r) => r.card_id}
      rowData={(r) => ({ card: r.card_id })}
      empty={NO_TOP_CARDS}
    />
  );
}

const GAP_LIST: Record<GapResolution["verdict"], string> = {
  gap: "Knowledge gap",
  answered_badly: "Answered badly",
};

/** Outcomes per knowledge-gap group (both lists of the knowledge-gaps report);
 * "Conversations" picks the group whose conversations are listed. */
export function GapResolutionTable(props: {
  rows: readonly GapResolution[];
  onPick: (group: GapResolution) => void;
}): ReactNode {
  const columns: Column<GapResolution>[] = [
    {
      header: "Questions like",
      cell: (g) => <StoredWords words={g.question} removed={removalOf(g.question, null)} />,
    },
    { header: "List", cell: (g) => GAP_LIST[g.verdict] },
    { header: "Questions", numeric: true, cell: (g) => g.questions },
    {
      header: "Conversations",
      numeric: true,
      cell: (g) => (
        <button
          type="button"
          className="link-button"
          aria-label={`Conversations of the questions like “${g.question}”`}
          onClick={() => props.onPick(g)}
        >
          {g.conversations}
        </button>
      ),
    },
    ...outcomeColumns<GapResolution>(),
  ];
  return (
    <DataTable
      label="Outcomes per knowledge-gap group"
      className="resolution-gaps"
      columns={columns}
      rows={props.rows}
      rowKey={(g) => g.group_id}
      rowData={(g) => ({ group: g.group_id })}
      empty={NO_GAP_GROUPS}
    />
  );
}

/** Whose conversations the list behind a number shows: any, a top card's, or a knowledge-gap
 * group's. */
export type Behind =
  { kind: "any" } | { kind: "card"; cardId: string } | { kind: "gap"; groupId: string };

const ANY: Behind = { kind: "any" };

/** What the list behind a number shows, as the page's address keeps it (a reload and a link
 * show the same): `?outcome=resolved&card=<id>` or `&gap=<group id>`. */
export interface Drilldown {
  outcome: Outcome;
  behind: Behind;
}

const DEFAULT_OUTCOME: Outcome = "escalated";

export function drilldownFromSearch(search: string): Drilldown {
  const q = new URLSearchParams(search);
  const asked = q.get("outcome");
  const outcome = OUTCOMES.find((o) => o.value === asked)?.value ?? DEFAULT_OUTCOME;
  const card = q.get("card");
  const gap = q.get("gap");
  const behind: Behind = card
    ? { kind: "card", cardId: card }
    : gap
      ? { kind: "gap", groupId: gap }
      : ANY;
  return { outcome, behind };
}

export function searchForDrilldown(d: Drilldown): string {
  const q = new URLSearchParams();
  if (d.outcome !== DEFAULT_OUTCOME) q.set("outcome", d.outcome);
  if (d.behind.kind === "card") q.set("card", d.behind.cardId);
  if (d.behind.kind === "gap") q.set("gap", d.behind.groupId);
  const text = q.toString();
  return text ? `?${text}` : "";
}

/** A top card as the drill-down names it: its title, or its id once it left the catalogue
 * (or before the table has loaded). */
export function cardName(cardId: string, rows: Loaded<CardResolution[]>): ReactNode {
  const row = rows.status === "ready" ? rows.data.find((r) => r.card_id === cardId) : undefined;
  return row?.title ?? <code>{cardId}</code>;
}

/** A knowledge-gap group as the drill-down names it: its naming question. */
export function groupName(groupId: string, rows: Loaded<GapResolution[]>): ReactNode {
  const row = rows.status === "ready" ? rows.data.find((g) => g.group_id === groupId) : undefined;
  if (!row) return <code>{groupId}</code>;
  return (
    <>
      “<StoredWords words={row.question} removed={removalOf(row.question, null)} />”
    </>
  );
}

/** The list's empty wording for `behind`. */
export function noneBehind(behind: Behind): string {
  if (behind.kind === "card") return "No conversation with this top card has this outcome.";
  if (behind.kind === "gap") return "No conversation of this knowledge-gap group has this outcome.";
  return "No conversation has this outcome.";
}

export function ConversationsBehind(props: {
  client: ApiClient;
  outcome: Outcome;
  behind: Behind;
}): ReactNode {
  const { behind } = props;
  const card = behind.kind === "card" ? behind.cardId : null;
  const group = behind.kind === "gap" ? behind.groupId : null;
  const state = useLoad(
    () => props.client.outcomeConversations(props.outcome, card, group),
    [props.client, props.outcome, card, group],
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
          empty={noneBehind(behind)}
        />
      )}
    </LoadState>
  );
}

export function AdminResolution(props: { client: ApiClient }): ReactNode {
  const [period, setPeriod] = useState<"day" | "week">("week");
  const [drill, setDrill] = useState<Drilldown>(() => drilldownFromSearch(window.location.search));
  const { outcome, behind } = drill;
  const choose = (next: Partial<Drilldown>): void => {
    const d = { ...drill, ...next };
    setDrill(d);
    // In the address, so a reload keeps it and the view can be linked.
    const url = `${window.location.pathname}${searchForDrilldown(d)}`;
    window.history.replaceState(window.history.state, "", url);
  };
  const state = useLoad(() => props.client.resolution(period), [props.client, period]);
  const cards = useLoad(() => props.client.cardResolution(), [props.client]);
  const groups = useLoad(() => props.client.gapResolution(), [props.client]);
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
      <h2>Per top card</h2>
      <p className="muted">
        A conversation’s top card is the card ranked first for its first answer that retrieved
        anything.
      </p>
      <LoadState state={cards} what="the outcomes per card">
        {(rows) => (
          <CardResolutionTable
            rows={rows}
            onPick={(cardId) => choose({ behind: { kind: "card", cardId } })}
          />
        )}
      </LoadState>
      <h2>Per knowledge-gap group</h2>
      <LoadState state={groups} what="the outcomes per knowledge-gap group">
        {(rows) => (
          <GapResolutionTable
            rows={rows}
            onPick={(g) => choose({ behind: { kind: "gap", groupId: g.group_id } })}
          />
        )}
      </LoadState>
      <h2>The conversations behind a number</h2>
      <div className="filters">
        <label htmlFor="resolution-outcome">Outcome</label>
        <select
          id="resolution-outcome"
          value={outcome}
          onChange={(e) => choose({ outcome: e.target.value as Outcome })}
        >
          {OUTCOMES.map((o) => (
            <option key={o.value} value={o.value}>
              {o.label}
            </option>
          ))}
        </select>
      </div>
      {behind.kind === "card" && (
        <p data-testid="resolution-card-filter">
          Whose top card is {cardName(behind.cardId, cards)}{" "}
          <button type="button" onClick={() => choose({ behind: ANY })}>
            Any card
          </button>
        </p>
      )}
      {behind.kind === "gap" && (
        <p data-testid="resolution-gap-filter">
          Of the questions like {groupName(behind.groupId, groups)}{" "}
          <button type="button" onClick={() => choose({ behind: ANY })}>
            Any conversation
          </button>
        </p>
      )}
      <ConversationsBehind client={props.client} outcome={outcome} behind={behind} />
    </section>
  );
}
