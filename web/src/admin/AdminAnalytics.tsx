/**
 * Analytics (admin): the headline numbers, then entry performance (how often each card is retrieved and cited, and how
 * helpful members found the answers citing it), charted and tabled; then members' feedback.
 */
import { useMemo, useState, type ReactNode } from "react";

import type { ApiClient } from "../api/client";
import type { EntryPerformance, Period } from "../api/types";
import { LoadState } from "../components/LoadState";
import { formatDate, formatNumber, formatRate } from "../components/format";
import { useLoad } from "../components/useLoad";
import { CardLink } from "./AdminCard";
import { AdminFeedback } from "./AdminFeedback";
import { EmptyState } from "./EmptyState";
import { Headline } from "./Headline";
import { CardBarsChart, ChartFrame, ChartLegend, TrendChart } from "./PerformanceChart";
import { ScrollBox } from "./ScrollBox";
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
  const state = useLoad(() => props.client.entryPerformance(period), [props.client, period]);
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
        </div>
        <LoadState state={state} what="entry performance">
          {(rows) => <EntryPerformanceView rows={rows} />}
        </LoadState>
      </section>
      <AdminFeedback client={props.client} />
    </section>
  );
}

export function EntryPerformanceView(props: { rows: readonly EntryPerformance[] }): ReactNode {
  const { rows } = props;
  const cards = useMemo(() => totalsByCard(rows), [rows]);
  const periods = useMemo(() => totalsByPeriod(rows), [rows]);
  if (rows.length === 0) return <EmptyState>{NO_RETRIEVALS}</EmptyState>;
  return (
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
      <ScrollBox label="Entry performance by card and period">
        <table className="performance-table">
          <thead>
            <tr>
              <th scope="col">Card</th>
              <th scope="col">Period</th>
              <th scope="col" className="num">
                Retrieved
              </th>
              <th scope="col" className="num">
                Cited
              </th>
              <th scope="col" className="num">
                Cite rate
              </th>
              <th scope="col" className="num">
                Mean rank
              </th>
              <th scope="col">Last cited</th>
              <th scope="col" className="num">
                Helpful
              </th>
              <th scope="col" className="num">
                Unhelpful
              </th>
              <th scope="col" className="num">
                Helpful rate
              </th>
              <th scope="col">Kind</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r, i) => (
              <tr key={`${r.card_id}-${r.period_start ?? "all"}-${i}`} data-card={r.card_id}>
                <td>
                  <CardLink id={r.card_id} />
                </td>
                <td>{r.period_start ? r.period_start.slice(0, 10) : "all time"}</td>
                <td className="num">{r.times_retrieved}</td>
                <td className="num">{r.times_cited}</td>
                <td className="num">
                  {formatRate(
                    r.times_retrieved > 0 ? r.times_cited / r.times_retrieved : r.cite_rate,
                  )}
                </td>
                <td className="num">{formatNumber(r.mean_rank, 2)}</td>
                <td>{formatDate(r.last_cited)}</td>
                <td className="num">{r.helpful}</td>
                <td className="num">{r.unhelpful}</td>
                <td className="num helpful-rate">{helpfulRate(r)}</td>
                <td>{r.is_external ? "external" : "internal"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollBox>
    </>
  );
}
