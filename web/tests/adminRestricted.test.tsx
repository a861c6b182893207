import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";

import { AdminTurn } from "../src/admin/AdminConversationView";
import type { AdminMessage } from "../src/api/types";

function message(change: Partial<AdminMessage>): AdminMessage {
  return {
    id: "m1",
    seq: 2,
    role: "assistant",
    content: "Refunds take five days [1].",
    sources: [],
    hybrid_path: "rrf_only",
    timings: null,
    generator: null,
    created_at: "2026-11-30T12:00:00Z",
    answer_status: "answered",
    support: 0.61,
    ...change,
  };
}

const render = (m: AdminMessage): string => renderToStaticMarkup(<AdminTurn message={m} />);

describe("an answer restricted by the exposure budget, in the admin view", () => {
  it("says so with a badge", () => {
    const html = render(message({ restricted: "exposure_budget" }));
    expect(html).toContain('data-testid="answer-restricted"');
    expect(html).toContain("exposure budget spent");
  });

  it("shows no badge on an ordinary answer", () => {
    expect(render(message({ restricted: null }))).not.toContain("answer-restricted");
    expect(render(message({}))).not.toContain("answer-restricted");
  });
});
