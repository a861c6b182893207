/**
 * Exposure (admin): members ranked by how much of the internal knowledge base reached them
 * (distinct internal cards, their share of the internal corpus, internal sentences repeated word
 * for word), and which of them the exposure budget restricted. Each member links to a drill-down.
 */
import { useState, type ReactNode } from "react";

import type { ApiClient } from "../api/client";
import type { ExposureBudget, ExposureMember, ExposureReport } from "../api/types";
import { LoadState } from "../components/LoadState";
import { NavLink } from "../components/NavLink";
import { formatDate, formatRate, plural } from "../components/format";
import { useLoad } from "../components/useLoad";
import { DataTable, type Column } from "./DataTable";
import { LookbackSelect, sinceFor, type Lookback } from "../components/LookbackSelect";

export const EMPTY_EXPOSURE = "No member has received internal knowledge in this period.";

export function memberExposurePath(userId: string): string {
  return `/admin/exposure/${encodeURIComponent(userId)}`;
}

/** A budget window for a person: whole days as days, anything else in hours. */
export function formatWindow(hours: number): string {
  if (hours >= 24 && hours % 24 === 0) return plural(hours / 24, "day", "days");
  return plural(Number(hours.toFixed(2)), "hour", "hours");
}

/** One line on the budget in force. */
export function budgetText(budget: ExposureBudget): string {
  if (budget.cards <= 0) return "The exposure budget is off: no member's answers are limited.";
  return (
    `Budget: ${plural(budget.cards, "internal card", "internal cards")} per member per ` +
    `${formatWindow(budget.window_hours)}; past it, a member's answers use external knowledge only.`
  );
}

/** The alert column: how many answers the budget restricted, and since when; "" for none. */
export function restrictedText(
  m: Pick<ExposureMember, "restricted_turns" | "first_restricted">,
): string {
  if (m.restricted_turns <= 0) return "";
  return `${plural(m.restricted_turns, "answer", "answers")} restricted since ${formatDate(m.first_restricted)}`;
}

/** One line on what the table holds; says so when only the most exposed members are shown. */
export function exposureSummary(r: ExposureReport): string {
  const corpus = `of ${plural(r.internal_cards, "internal card", "internal cards")}`;
  const who = plural(r.members_total, "member", "members");
  if (r.members.length < r.members_total) {
    return `${who} received internal knowledge (${corpus}); the ${r.members.length} most exposed are shown.`;
  }
  return `${who} received internal knowledge (${corpus}).`;
}

export function AdminExposure(props: { client: ApiClient }): ReactNode {
  const [lookback, setLookback] = useState<Lookback>("all");
  const state = useLoad(
    () => props.client.exposure({ since: sinceFor(lookback) }),
    [props.client, lookback],
  );
  return (
    <section className="admin-page">
      <h1>Exposure</h1>
      <p className="muted">
        How much of the internal knowledge base reached each member: the internal cards their
        answers drew on, and the internal sentences the answers repeated word for word.
      </p>
      <div className="filters">
        <LookbackSelect
          id="exposure-window"
          label="Answered"
          value={lookback}
          onChange={setLookback}
        />
      </div>
      <LoadState state={state} what="exposure">
        {(report) => <ExposureRanking report={report} />}
      </LoadState>
    </section>
  );
}

export function ExposureRanking(props: { report: ExposureReport }): ReactNode {
  const r = props.report;
  return (
    <>
      <p className="muted" data-testid="exposure-budget">
        {budgetText(r.budget)}
      </p>
      <DataTable
        label="Members by exposure"
        className="exposure-table"
        columns={MEMBER_COLUMNS}
        rows={r.members}
        rowKey={(m) => m.user_id}
        rowClassName={(m) => (restrictedText(m) ? "exposure-row flagged" : "exposure-row")}
        empty={EMPTY_EXPOSURE}
        emptyTestId="exposure-empty"
        header={
          <p className="muted" role="status">
            {exposureSummary(r)}
          </p>
        }
      />
    </>
  );
}

const MEMBER_COLUMNS: readonly Column<ExposureMember>[] = [
  {
    header: "Member",
    cell: (m) => (
      <>
        <NavLink to={memberExposurePath(m.user_id)}>{m.name}</NavLink>{" "}
        {m.role !== "member" && <span className="badge">{m.role}</span>}
      </>
    ),
  },
  { header: "Internal cards", numeric: true, className: "exposure-cards", cell: (m) => m.cards },
  { header: "% of internal corpus", numeric: true, cell: (m) => formatRate(m.corpus_share) },
  { header: "Verbatim sentences", numeric: true, cell: (m) => m.verbatim_sentences },
  { header: "Answers", numeric: true, cell: (m) => m.turns },
  {
    header: "Longest span",
    numeric: true,
    cell: (m) => (m.longest_span > 0 ? plural(m.longest_span, "word", "words") : "—"),
  },
  { header: "Last exposed", cell: (m) => formatDate(m.last_exposed) },
  {
    header: "Restricted",
    testId: "restricted",
    cell: (m) => {
      const restricted = restrictedText(m);
      return restricted ? <span className="badge badge-flag">{restricted}</span> : "—";
    },
  },
];
