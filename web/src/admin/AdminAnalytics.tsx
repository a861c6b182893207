/**
 * Analytics (admin): the headline numbers, then entry performance (how often each card is retrieved and cited, and how
 * helpful members found the answers citing it, and whom each card is for), charted and tabled, for every member or the
 * members of one audience; then members' feedback.
 */
import { useMemo, useState, type ReactNode } from "react";

import type { ApiClient } from "../api/client";
import type { EntryPerformance, Period } from "../api/types";
import { LoadState } from "../components/LoadState";
import { formatDate, formatNumber, formatRate } from "../components/format";
import { useLoad } from "../components/useLoad";
import { CardLink } from "./AdminCard";
import { AdminFeedback } from "./AdminFeedback";
import { DataTable, type Column } from "./DataTable";
import { Headline } from "./Headline";
import { CardBarsChart, ChartFrame, ChartLegend, TrendChart } from "./PerformanceChart";
import { totalsByCard, totalsByPeriod } from "./performance";

const PERIODS: { value: Period; label: string }[] = [
  { value: "day", label: "Per day" },
  { value: "week", label: "Per week" },
  { value: "month", label: "Per month" },
  { value: "all", label: "All time" },
];

export const NO_RETRIEVALS = "No retrievals recorded yet: ask a few questions first.";

/** A row's helpful rate, recomputed from its counts; "—" when nobody rated. */
function helpfulRate(r: EntryPerformance): string {
  const rated = r.helpful + r.unhelpful;
  return formatRate(rated > 0 ? r.helpful / rated : r.helpful_rate);
}

export function AdminAnalytics(props: { client: ApiClient }): ReactNode {
  const [period, setPeriod] = useState<Period>("day");
  const [audience, setAudience] = useState("");
  const group = audience.trim() || undefined;
  const state = useLoad(
    () => props.client.entryPerformance(period, group),
    [props.client, period, group],
  );
  return (
    <section className="admin-page">
      <h1>Analytics</h1>
      <Headline client={props.client} />
      <section aria-labelledby="performance-heading">
        <h2 id="performance-heading">Entry performance</h2>
        <div className="filters">
          <label htmlFor="period">Period</label>
          <select id="period" value={period} onChange={(e) => setPeriod(e.target.value as Period)}>
            {PERIODS.map((p) => (
              <option key={p.value} value={p.value}>
                {p.label}
              </option>
            ))}
          </select>
          <label htmlFor="performance-audience">Audience</label>
          <input
            id="performance-audience"
            value={audience}
            placeholder="every member"
            onChange={(e) => setAudience(e.target.value)}
          />
        </div>
        <LoadState state={state} what="entry performance">
          {(rows) => <EntryPerformanceView rows={rows} />}
        </LoadState>
      </section>
      <AdminFeedback client={props.client} />
    </section>
  );
}

const PERFORMANCE_COLUMNS: readonly Column<EntryPerformance>[] = [
  { header: "Card", cell: (r) => <CardLink id={r.card_id} /> },
  {
    header: "Period",
    cell: (r) => (r.period_start ? r.period_start.slice(0, 10) : "all time"),
  },
  { header: "Retrieved", numeric: true, cell: (r) => r.times_retrieved },
  { header: "Cited", numeric: true, cell: (r) => r.times_cited },
  {
    header: "Cite rate",
    numeric: true,
    cell: (r) =>
      formatRate(r.times_retrieved > 0 ? r.times_cited / r.times_retrieved : r.cite_rate),
  },
  { header: "Mean rank", numeric: true, cell: (r) => formatNumber(r.mean_rank, 2) },
  { header: "Last cited", cell: (r) => formatDate(r.last_cited) },
  { header: "Helpful", numeric: true, cell: (r) => r.helpful },
  { header: "Unhelpful", numeric: true, cell: (r) => r.unhelpful },
  { header: "Helpful rate", numeric: true, className: "helpful-rate", cell: helpfulRate },
  {
    header: <abbr title="Requests for a person after an answer that cited the card">Handoffs</abbr>,
    numeric: true,
    className: "handoffs",
    cell: (r) => r.handoffs,
  },
  { header: "Kind", cell: (r) => (r.is_external ? "external" : "internal") },
  {
    header: "For",
    className: "audiences",
    cell: (r) => (r.audiences.length > 0 ? r.audiences.join(", ") : "every member"),
  },
];

export function EntryPerformanceView(props: { rows: readonly EntryPerformance[] }): ReactNode {
  const { rows } = props;
  const cards = useMemo(() => totalsByCard(rows), [rows]);
  const periods = useMemo(() => totalsByPeriod(rows), [rows]);
  return (
    <DataTable
      label="Entry performance by card and period"
      className="performance-table"
      columns={PERFORMANCE_COLUMNS}
      rows={rows}
      rowKey={(r, i) => `${r.card_id}-${r.period_start ?? "all"}-${i}`}
      rowData={(r) => ({ card: r.card_id })}
      empty={NO_RETRIEVALS}
      header={
        <>
          <div className="charts">
            <figure>
              <figcaption>Per card (most retrieved first)</figcaption>
              <ChartFrame>{(width) => <CardBarsChart cards={cards} width={width} />}</ChartFrame>
              <ChartLegend />
            </figure>
            <figure>
              <figcaption>Trend over periods</figcaption>
              <ChartFrame>{(width) => <TrendChart periods={periods} width={width} />}</ChartFrame>
              <ChartLegend trend />
            </figure>
          </div>
          <h3>By card and period</h3>
        </>
      }
    />
  );
}
