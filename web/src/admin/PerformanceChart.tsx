/**
 * Hand-made SVG charts for entry performance: per-card bars (times retrieved, cite rate) and a
 * per-period trend. Colours come from the stylesheet (classes), not inline styles, so the
 * page stays within the CSP.
 */
import type { ReactNode } from "react";

import { formatRate } from "../components/format";
import type { CardTotals, PeriodTotals } from "./performance";

const BAR_WIDTH = 640;
const LABEL_WIDTH = 220;
const ROW = 30;

/** Two bars per card: times retrieved (scaled to the busiest card) and cite rate (0-100%). */
export function CardBarsChart(props: { cards: readonly CardTotals[]; limit?: number }): ReactNode {
  const cards = props.cards.slice(0, props.limit ?? 15);
  if (cards.length === 0) return null;
  const maxRetrieved = Math.max(1, ...cards.map((c) => c.times_retrieved));
  const plot = BAR_WIDTH - LABEL_WIDTH - 110; // room on the right for "12 · 100.0%"
  const height = cards.length * ROW + 30;
  return (
    <svg
      className="chart chart-cards"
      viewBox={`0 0 ${BAR_WIDTH} ${height}`}
      role="img"
      aria-labelledby="chart-cards-title"
      data-bars={cards.length}
    >
      <title id="chart-cards-title">
        Times retrieved and cite rate for the {cards.length} most retrieved cards
      </title>
      <g className="legend" transform="translate(0, 12)">
        <rect className="bar-retrieved" x={LABEL_WIDTH} y={-9} width={10} height={10} />
        <text x={LABEL_WIDTH + 14} y={0}>
          times retrieved
        </text>
        <rect className="bar-cite" x={LABEL_WIDTH + 130} y={-9} width={10} height={10} />
        <text x={LABEL_WIDTH + 144} y={0}>
          cite rate
        </text>
      </g>
      {cards.map((c, i) => {
        const y = 24 + i * ROW;
        const retrievedW = (c.times_retrieved / maxRetrieved) * plot;
        const citeW = (c.cite_rate ?? 0) * plot;
        return (
          <g key={c.card_id} className="chart-row" data-card={c.card_id}>
            <text className="chart-label" x={LABEL_WIDTH - 8} y={y + 14} textAnchor="end">
              {c.card_id.length > 30 ? `${c.card_id.slice(0, 29)}…` : c.card_id}
            </text>
            <rect
              className="bar-retrieved"
              x={LABEL_WIDTH}
              y={y}
              width={Math.max(1, retrievedW)}
              height={11}
            >
              <title>{`${c.card_id}: retrieved ${c.times_retrieved} times`}</title>
            </rect>
            <rect
              className="bar-cite"
              x={LABEL_WIDTH}
              y={y + 12}
              width={Math.max(1, citeW)}
              height={11}
            >
              <title>{`${c.card_id}: cite rate ${formatRate(c.cite_rate)}`}</title>
            </rect>
            <text
              className="chart-value"
              x={LABEL_WIDTH + Math.max(retrievedW, citeW) + 6}
              y={y + 16}
            >
              {c.times_retrieved} · {formatRate(c.cite_rate)}
            </text>
          </g>
        );
      })}
    </svg>
  );
}

/** Retrieved (bars) and cite rate (line) per period, oldest on the left. */
export function TrendChart(props: { periods: readonly PeriodTotals[] }): ReactNode {
  const periods = props.periods;
  if (periods.length === 0) return null;
  const width = 640;
  const height = 220;
  const left = 44;
  const right = 44;
  const top = 16;
  const bottom = 40;
  const plotW = width - left - right;
  const plotH = height - top - bottom;
  const maxRetrieved = Math.max(1, ...periods.map((p) => p.times_retrieved));
  const step = plotW / periods.length;
  const x = (i: number): number => left + step * i + step / 2;
  const yRate = (r: number): number => top + plotH * (1 - r);
  const points = periods
    .map((p, i) =>
      p.cite_rate === null ? null : `${x(i).toFixed(1)},${yRate(p.cite_rate).toFixed(1)}`,
    )
    .filter((p): p is string => p !== null);
  const labelEvery = Math.max(1, Math.ceil(periods.length / 8));
  return (
    <svg
      className="chart chart-trend"
      viewBox={`0 0 ${width} ${height}`}
      role="img"
      aria-labelledby="chart-trend-title"
      data-periods={periods.length}
    >
      <title id="chart-trend-title">Times retrieved and cite rate per period, all cards</title>
      <line className="axis" x1={left} y1={top + plotH} x2={left + plotW} y2={top + plotH} />
      <text className="axis-label" x={left - 6} y={top + 4} textAnchor="end">
        100%
      </text>
      <text className="axis-label" x={left - 6} y={top + plotH} textAnchor="end">
        0%
      </text>
      <text className="axis-label" x={left + plotW + 6} y={top + 4}>
        {maxRetrieved}
      </text>
      {periods.map((p, i) => {
        const h = (p.times_retrieved / maxRetrieved) * plotH;
        return (
          <g key={p.period_start}>
            <rect
              className="bar-retrieved"
              x={x(i) - Math.min(18, step * 0.35)}
              y={top + plotH - h}
              width={Math.min(36, step * 0.7)}
              height={Math.max(0, h)}
            >
              <title>{`${p.period_start}: retrieved ${p.times_retrieved}, cited ${p.times_cited}`}</title>
            </rect>
            {i % labelEvery === 0 && (
              <text className="axis-label" x={x(i)} y={top + plotH + 16} textAnchor="middle">
                {p.period_start === "all" ? "all time" : p.period_start.slice(0, 10)}
              </text>
            )}
          </g>
        );
      })}
      {points.length > 1 && <polyline className="line-cite" points={points.join(" ")} />}
      {periods.map((p, i) =>
        p.cite_rate === null ? null : (
          <circle
            key={`pt-${p.period_start}`}
            className="dot-cite"
            cx={x(i)}
            cy={yRate(p.cite_rate)}
            r={4}
          >
            <title>{`${p.period_start}: cite rate ${formatRate(p.cite_rate)}`}</title>
          </circle>
        ),
      )}
    </svg>
  );
}
