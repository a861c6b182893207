import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";

import { AbstentionBlock, abstentionSummary } from "../src/admin/AbstentionCalibration";
import type { AbstentionPublic } from "../src/api/types";

const thresholds = { min_dense: 0.3642, min_coverage: 0, min_key_coverage: 0 };

const calibrated: AbstentionPublic = {
  source: "calibrated",
  thresholds,
  calibration: {
    thresholds,
    fitted_at: "2026-12-02T03:00:00+00:00",
    kb_version: "v-1-abcdef",
    kb_cards: 140,
    sampled_cards: 140,
    probes: { answerable: 274, near_miss: 140, off_domain: 101 },
    answered_rate: 0.989,
    refusal_rate: 0.66,
    refusal_by_kind: { near_miss: 0.43, off_domain: 0.98 },
    signal_auc: { dense: 0.9 },
    guard: null,
    common_terms: 812,
  },
};

describe("abstention calibration block", () => {
  it("says the thresholds were fitted on this knowledge base, and how the fit did", () => {
    const html = renderToStaticMarkup(<AbstentionBlock abstention={calibrated} />);
    expect(html).toContain("dense similarity 0.364");
    expect(html).toContain("fitted on this knowledge base");
    expect(html).toContain("140 of 140 cards");
    expect(html).toContain("answered 99%");
    expect(html).toContain("241");
    expect(html).toContain("refused 66%");
  });

  it("says when an operator override wins", () => {
    const line = abstentionSummary({ ...calibrated, source: "override" });
    expect(line).toContain("overrides the calibration");
  });

  it("says when abstention is off", () => {
    const off: AbstentionPublic = { source: "off", thresholds: null, calibration: null };
    expect(abstentionSummary(off)).toBe("Not found: abstention is switched off.");
    expect(renderToStaticMarkup(<AbstentionBlock abstention={off} />)).not.toContain("Fitted");
  });
});
