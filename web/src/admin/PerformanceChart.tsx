/**
 * Hand-made SVG charts for entry performance: per-card bars (times retrieved, cite rate) and a
 * per-period trend. Each is drawn for the width it is shown at (one unit per CSS pixel, see
 * `ChartFrame`), so its 12 px labels stay 12 px on a phone; legends are HTML beside the chart.
 * Colours come from the stylesheet (classes), not inline styles, so the page stays within the CSP.
 */
import type { ReactNode } from "react";

import { formatRate } from "../components/format";
import type { CardTotals, PeriodTotals } from "./performance";
import { useWidth } from "./useWidth";

/** The width a chart is drawn at before its frame has been measured (and in static renders). */
export const DEFAULT_WIDTH = 640;
const ROW = 30;
/** Roughly how wide one character of a 12 px label is. */
const CHAR_PX = 7;

/** Measures its own width and draws `children(width)` at it. */
export function ChartFrame(props: { children: (width: number) => ReactNode }): ReactNode {
  const [ref, width] = useWidth<HTMLDivElement>();
  return (
    <div ref={ref} className="chart-frame">
      {props.children(width ?? DEFAULT_WIDTH)}
    </div>
  );
}

/** The legend of both charts: what the bars and the line are, and which scale each reads on. */
export function ChartLegend(props: { trend?: boolean }): ReactNode {
  return (
    <ul className="chart-legend">
      <li>
        <span className="swatch swatch-retrieved" aria-hidden="true" />
        Times retrieved{props.trend ? " (bars, right scale)" : ""}
      </li>
      <li>
        <span
          className={props.trend ? "swatch swatch-line" : "swatch swatch-cite"}
          aria-hidden="true"
        />
        Cite rate{props.trend ? " (line, left scale)" : ""}
      </li>
    </ul>
  );
}

function shorten(text: string, chars: number): string {
  return text.length > chars ? `${text.slice(0, Math.max(1, chars - 1))}…` : text;
}

/** Two bars per card: times retrieved (scaled to the busiest card) and cite rate (0-100%). */
export function CardBarsChart(props: {
  cards: readonly CardTotals[];
  limit?: number;
  width?: number;
}): ReactNode {
  const cards = props.cards.slice(0, props.limit ?? 15);
  if (cards.length === 0) return null;
  const width = Math.max(240, Math.round(props.width ?? DEFAULT_WIDTH));
  const labelWidth = Math.round(Math.min(220, Math.max(90, width * 0.34)));
  const valueRoom = 96; // "12 · 100.0%"
  const plot = width - labelWidth - valueRoom;
  const labelChars = Math.floor((labelWidth - 8) / CHAR_PX);
  const maxRetrieved = Math.max(1, ...cards.map((c) => c.times_retrieved));
  const height = cards.length * ROW + 8;
  return (
    <svg
      className="chart chart-cards"
      viewBox={`0 0 ${width} ${height}`}
      role="img"
      aria-labelledby="chart-cards-title"
      data-bars={cards.length}
    >
      <title id="chart-cards-title">
        Times retrieved and cite rate for the {cards.length} most retrieved cards
      </title>
      {cards.map((c, i) => {
        const y = 4 + i * ROW;
        const retrievedW = (c.times_retrieved / maxRetrieved) * plot;
        const citeW = (c.cite_rate ?? 0) * plot;
        return (
          <g key={c.card_id} className="chart-row" data-card={c.card_id}>
            <text className="chart-label" x={labelWidth - 8} y={y + 16} textAnchor="end">
              {shorten(c.card_id, labelChars)}
            </text>
            <rect
              className="bar-retrieved"
              x={labelWidth}
              y={y}
              width={Math.max(1, retrievedW)}
              height={11}
            >
              <title>{`${c.card_id}: retrieved ${c.times_retrieved} times`}</title>
            </rect>
            <rect
              className="bar-cite"
              x={labelWidth}
              y={y + 12}
              width={Math.max(1, citeW)}
              height={11}
            >
              <title>{`${c.card_id}: cite rate ${formatRate(c.cite_rate)}`}</title>
            </rect>
            <text
              className="chart-value"
              x={labelWidth + Math.max(retrievedW, citeW) + 6}
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
export function TrendChart(props: { periods: readonly PeriodTotals[]; width?: number }): ReactNode {
  const periods = props.periods;
  if (periods.length === 0) return null;
  const width = Math.max(240, Math.round(props.width ?? DEFAULT_WIDTH));
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
  // A date label is ~10 characters: leave each one room, and label every n-th period.
  const labels = Math.max(1, Math.floor(plotW / (11 * CHAR_PX)));
  const labelEvery = Math.max(1, Math.ceil(periods.length / labels));
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
      <text className="axis-label" x={left + plotW + 6} y={top + plotH}>
        0
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
              <text className="axis-label" x={x(i)} y={top + plotH + 18} textAnchor="middle">
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
