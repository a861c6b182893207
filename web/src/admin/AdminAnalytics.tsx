/** Entry performance (admin): how often each card is retrieved and cited, charted and tabled. */
import { useMemo, useState, type ReactNode } from "react";

import type { ApiClient } from "../api/client";
import type { Period } from "../api/types";
import { LoadState } from "../components/LoadState";
import { formatDate, formatNumber, formatRate } from "../components/format";
import { useLoad } from "../components/useLoad";
import { CardBarsChart, TrendChart } from "./PerformanceChart";
import { totalsByCard, totalsByPeriod } from "./performance";

const PERIODS: { value: Period; label: string }[] = [
  { value: "day", label: "Per day" },
  { value: "week", label: "Per week" },
  { value: "month", label: "Per month" },
  { value: "all", label: "All time" },
];

export function AdminAnalytics(props: { client: ApiClient }): ReactNode {
  const [period, setPeriod] = useState<Period>("day");
  const state = useLoad(() => props.client.entryPerformance(period), [props.client, period]);
  const rows = state.status === "ready" ? state.data : null;
  const cards = useMemo(() => (rows ? totalsByCard(rows) : []), [rows]);
  const periods = useMemo(() => (rows ? totalsByPeriod(rows) : []), [rows]);
  return (
    <section className="admin-page">
      <h1>Entry performance</h1>
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
        {(data) =>
          data.length === 0 ? (
            <p className="muted">No retrievals recorded yet. Ask a few questions first.</p>
          ) : (
            <>
              <div className="charts">
                <figure>
                  <figcaption>Per card (most retrieved first)</figcaption>
                  <CardBarsChart cards={cards} />
                </figure>
                <figure>
                  <figcaption>Trend over periods</figcaption>
                  <TrendChart periods={periods} />
                </figure>
              </div>
              <h2>By card and period</h2>
              <div className="table-wrap">
                <table className="performance-table">
                  <thead>
                    <tr>
                      <th scope="col">Card</th>
                      <th scope="col">Period</th>
                      <th scope="col">Retrieved</th>
                      <th scope="col">Cited</th>
                      <th scope="col">Cite rate</th>
                      <th scope="col">Mean rank</th>
                      <th scope="col">Last cited</th>
                      <th scope="col">Kind</th>
                    </tr>
                  </thead>
                  <tbody>
                    {data.map((r, i) => (
                      <tr key={`${r.card_id}-${r.period_start ?? "all"}-${i}`}>
                        <td>
                          <code>{r.card_id}</code>
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
                        <td>{r.is_external ? "external" : "internal"}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            </>
          )
        }
      </LoadState>
    </section>
  );
}
