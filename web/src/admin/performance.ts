/**
 * Pure roll-ups of the entry-performance rows for the analytics charts: totals per card over
 * the selected periods, and the trend per period over all cards. Cite and helpful rates are
 * recomputed from the counts (cited / retrieved, helpful / rated) so sums of periods stay exact.
 */
import type { EntryPerformance } from "../api/types";

export interface CardTotals {
  card_id: string;
  times_retrieved: number;
  times_cited: number;
  cite_rate: number | null;
  mean_rank: number | null;
  last_cited: string | null;
  is_external: boolean;
  /** Thumbs up / down on answers that cited the card. */
  helpful: number;
  unhelpful: number;
  helpful_rate: number | null;
}

export interface PeriodTotals {
  period_start: string;
  times_retrieved: number;
  times_cited: number;
  cite_rate: number | null;
}

function rate(part: number, whole: number): number | null {
  return whole > 0 ? part / whole : null;
}

/** Sum each card's rows; sort by times retrieved, then cited, then id. */
export function totalsByCard(rows: readonly EntryPerformance[]): CardTotals[] {
  const acc = new Map<string, CardTotals & { rankWeight: number; rankSum: number }>();
  for (const r of rows) {
    const t = acc.get(r.card_id) ?? {
      card_id: r.card_id,
      times_retrieved: 0,
      times_cited: 0,
      cite_rate: null,
      mean_rank: null,
      last_cited: null,
      is_external: r.is_external,
      helpful: 0,
      unhelpful: 0,
      helpful_rate: null,
      rankWeight: 0,
      rankSum: 0,
    };
    t.times_retrieved += r.times_retrieved;
    t.times_cited += r.times_cited;
    t.helpful += r.helpful;
    t.unhelpful += r.unhelpful;
    if (typeof r.mean_rank === "number" && r.times_retrieved > 0) {
      // Mean of means weighted by how often the card was retrieved in each period.
      t.rankSum += r.mean_rank * r.times_retrieved;
      t.rankWeight += r.times_retrieved;
    }
    if (r.last_cited && (!t.last_cited || r.last_cited > t.last_cited)) t.last_cited = r.last_cited;
    acc.set(r.card_id, t);
  }
  return [...acc.values()]
    .map(({ rankWeight, rankSum, ...t }) => ({
      ...t,
      cite_rate: rate(t.times_cited, t.times_retrieved),
      helpful_rate: rate(t.helpful, t.helpful + t.unhelpful),
      mean_rank: rankWeight > 0 ? rankSum / rankWeight : null,
    }))
    .sort(
      (a, b) =>
        b.times_retrieved - a.times_retrieved ||
        b.times_cited - a.times_cited ||
        a.card_id.localeCompare(b.card_id),
    );
}

/** Sum all cards per period, oldest period first; rows without a period count as "all". */
export function totalsByPeriod(rows: readonly EntryPerformance[]): PeriodTotals[] {
  const acc = new Map<string, PeriodTotals>();
  for (const r of rows) {
    const key = r.period_start ?? "all";
    const t = acc.get(key) ?? {
      period_start: key,
      times_retrieved: 0,
      times_cited: 0,
      cite_rate: null,
    };
    t.times_retrieved += r.times_retrieved;
    t.times_cited += r.times_cited;
    acc.set(key, t);
  }
  return [...acc.values()]
    .map((t) => ({ ...t, cite_rate: rate(t.times_cited, t.times_retrieved) }))
    .sort((a, b) => a.period_start.localeCompare(b.period_start));
}
