/**
 * When the assistant says "not found" (admin): the abstention thresholds in use, whether they
 * were fitted on this knowledge base at its last change or set by the operator, and how the
 * fit did on its probe questions. Shown on the knowledge-gaps page, whose "not found" rows it
 * explains.
 */
import type { ReactNode } from "react";

import type { ApiClient } from "../api/client";
import type { AbstentionPublic } from "../api/types";
import { LoadState } from "../components/LoadState";
import { formatDate, formatNumber } from "../components/format";
import { useLoad } from "../components/useLoad";

const SOURCES: Record<AbstentionPublic["source"], string> = {
  calibrated: "fitted on this knowledge base",
  override: "set by the operator (CITEWALL_ABSTAIN_*), which overrides the calibration",
  default: "the configured defaults: no calibration is stored yet (run an ingest)",
  fixed: "fixed thresholds",
  off: "abstention is switched off",
};

const percent = (x: number): string => `${Math.round(x * 100)}%`;

/** One line on what the decision is and where it comes from. */
export function abstentionSummary(a: AbstentionPublic): string {
  const t = a.thresholds;
  if (!t) return `Not found: ${SOURCES[a.source]}.`;
  return (
    `Not found below dense similarity ${formatNumber(t.min_dense, 3)} or key-term coverage ` +
    `${formatNumber(t.min_key_coverage, 2)}: ${SOURCES[a.source]}.`
  );
}

export function AbstentionCalibration(props: { client: ApiClient }): ReactNode {
  const state = useLoad(() => props.client.abstention(), [props.client]);
  return (
    <LoadState state={state} what="the abstention calibration">
      {(a) => <AbstentionBlock abstention={a} />}
    </LoadState>
  );
}

export function AbstentionBlock(props: { abstention: AbstentionPublic }): ReactNode {
  const a = props.abstention;
  const c = a.calibration;
  return (
    <section className="abstention-calibration" aria-label="Abstention calibration">
      <p className="muted">{abstentionSummary(a)}</p>
      {c && (
        <p className="muted" data-testid="calibration-fit">
          Fitted {formatDate(c.fitted_at)} on {c.sampled_cards} of {c.kb_cards} cards:{" "}
          {c.probes.answerable ?? 0} questions made from the cards answered{" "}
          {percent(c.answered_rate)}; {(c.probes.off_domain ?? 0) + (c.probes.near_miss ?? 0)}{" "}
          off-topic and near-miss probes refused {percent(c.refusal_rate)}.
          {c.guard ? ` ${c.guard}.` : ""}
        </p>
      )}
    </section>
  );
}
