/**
 * The Resolution page's parts: one stacked bar per period with a segment per outcome, sized by
 * its count; and the table's rates.
 */
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";

import { OUTCOMES, OutcomeBars } from "../src/admin/AdminResolution";
import type { ResolutionPeriod } from "../src/api/types";

function period(start: string, counts: Partial<ResolutionPeriod["counts"]>): ResolutionPeriod {
  const full = { resolved: 0, escalated: 0, unresolved: 0, abandoned: 0, open: 0, ...counts };
  const decided = full.resolved + full.escalated + full.unresolved + full.abandoned;
  return {
    period_start: start,
    counts: full,
    decided,
    resolution_rate: decided ? full.resolved / decided : null,
    escalation_rate: decided ? full.escalated / decided : null,
    unresolved_rate: decided ? full.unresolved / decided : null,
    abandoned_rate: decided ? full.abandoned / decided : null,
  };
}

describe("the outcome bars", () => {
  it("draw one row per period, a segment per outcome sized by its count", () => {
    const html = renderToStaticMarkup(
      <OutcomeBars
        periods={[
          period("2026-03-09", { resolved: 3, escalated: 1 }),
          period("2026-03-02", { open: 2 }),
        ]}
        width={490}
      />,
    );
    expect(html.match(/data-period=/g)).toHaveLength(2);
    expect(html.match(/class="bar-outcome /g)).toHaveLength(2 * OUTCOMES.length);
    // 490 px - 90 for the label - 40 for the total: 360 px for the largest total (4).
    expect(html).toMatch(/class="bar-outcome bar-resolved" x="90" y="6" width="270"/);
    expect(html).toMatch(/class="bar-outcome bar-escalated" x="360" y="6" width="90"/);
    expect(html).toContain("<title>Escalated to a person: 1</title>");
    expect(html).toMatch(/class="bar-outcome bar-open" x="90" y="34" width="180"/);
  });

  it("draw nothing for no period", () => {
    const html = renderToStaticMarkup(<OutcomeBars periods={[]} width={400} />);
    expect(html).not.toContain("<rect");
  });
});
