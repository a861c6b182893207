import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";

import { CardBarsChart, ChartLegend, TrendChart } from "../src/admin/PerformanceChart";
import type { CardTotals } from "../src/admin/performance";

const card = (card_id: string, r: number, c: number): CardTotals => ({
  card_id,
  times_retrieved: r,
  times_cited: c,
  cite_rate: r ? c / r : null,
  mean_rank: 1,
  last_cited: null,
  is_external: true,
  helpful: 0,
  unhelpful: 0,
  helpful_rate: null,
});

function widths(markup: string, cls: string): number[] {
  return [
    ...markup.matchAll(new RegExp(`class="${cls}" x="\\d+" y="-?\\d+" width="([\\d.]+)"`, "g")),
  ].map((m) => Number(m[1]));
}

describe("CardBarsChart", () => {
  it("draws one row per card with bars proportional to the data", () => {
    const markup = renderToStaticMarkup(
      <CardBarsChart cards={[card("a", 10, 5), card("b", 5, 5), card("<script>", 0, 0)]} />,
    );
    expect(markup).toContain('data-bars="3"');
    const retrieved = widths(markup, "bar-retrieved");
    const cite = widths(markup, "bar-cite");
    expect(retrieved[0]).toBeCloseTo(2 * (retrieved[1] ?? 0));
    expect(cite[1]).toBeCloseTo(2 * (cite[0] ?? 0));
    expect(retrieved[2]).toBe(1); // a zero still shows a hairline
    expect(markup).toContain("&lt;script&gt;");
    expect(markup).not.toContain("<script>");
  });

  it("draws nothing without data and caps the number of rows", () => {
    expect(renderToStaticMarkup(<CardBarsChart cards={[]} />)).toBe("");
    const many = Array.from({ length: 30 }, (_, i) => card(`c${i}`, 30 - i, 1));
    expect(renderToStaticMarkup(<CardBarsChart cards={many} />)).toContain('data-bars="15"');
  });
});

describe("TrendChart", () => {
  it("plots a cite-rate line across periods", () => {
    const markup = renderToStaticMarkup(
      <TrendChart
        periods={[
          { period_start: "2026-01-01", times_retrieved: 4, times_cited: 2, cite_rate: 0.5 },
          { period_start: "2026-01-02", times_retrieved: 8, times_cited: 8, cite_rate: 1 },
          { period_start: "2026-01-03", times_retrieved: 0, times_cited: 0, cite_rate: null },
        ]}
      />,
    );
    expect(markup).toContain('data-periods="3"');
    expect(markup.match(/<circle/g)).toHaveLength(2);
    expect(markup).toContain('class="line-cite"');
  });

  it("is drawn at the width it is shown at, with fewer date labels when narrow", () => {
    const periods = Array.from({ length: 14 }, (_, i) => ({
      period_start: `2026-01-${String(i + 1).padStart(2, "0")}`,
      times_retrieved: i,
      times_cited: 0,
      cite_rate: 0,
    }));
    const dates = (markup: string): number => (markup.match(/>2026-01-\d\d</g) ?? []).length;
    const wide = renderToStaticMarkup(<TrendChart periods={periods} width={1000} />);
    const phone = renderToStaticMarkup(<TrendChart periods={periods} width={340} />);
    expect(wide).toContain('viewBox="0 0 1000 220"');
    expect(phone).toContain('viewBox="0 0 340 220"');
    // Each label keeps ~77 px of the plot (a 12 px date is ~70 px wide).
    expect(dates(phone)).toBeLessThanOrEqual(Math.floor((340 - 88) / 77));
    expect(dates(wide)).toBeGreaterThan(dates(phone));
  });
});

describe("ChartLegend", () => {
  it("names the bars and the line, and the trend's scales", () => {
    const markup = renderToStaticMarkup(<ChartLegend trend />);
    expect(markup).toContain("Times retrieved (bars, right scale)");
    expect(markup).toContain("Cite rate (line, left scale)");
  });
});
