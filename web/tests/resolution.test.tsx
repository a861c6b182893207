// @vitest-environment happy-dom
/**
 * The Resolution page's parts: one stacked bar per period with a segment per outcome, sized by
 * its count; the table's rates; the outcomes per top card (a removed card named by its id, its
 * count picking the card whose conversations are listed) and per knowledge-gap group (its
 * count picking the group whose conversations are listed, through the `gap_group` filter).
 */
import { act } from "react";
import { createRoot } from "react-dom/client";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it, vi } from "vitest";

import {
  CardResolutionTable,
  ConversationsBehind,
  GapResolutionTable,
  NO_GAP_GROUPS,
  NO_TOP_CARDS,
  OUTCOMES,
  OutcomeBars,
  noneBehind,
  type Behind,
} from "../src/admin/AdminResolution";
import { ApiClient } from "../src/api/client";
import type { CardResolution, GapResolution, ResolutionPeriod } from "../src/api/types";

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

function shares(
  counts: Partial<ResolutionPeriod["counts"]>,
): Omit<ResolutionPeriod, "period_start"> {
  const { period_start: _, ...rest } = period("", counts);
  return rest;
}

describe("the outcomes per top card", () => {
  const rows: CardResolution[] = [
    {
      card_id: "refunds",
      title: "Refunds",
      conversations: 4,
      ...shares({ resolved: 3, escalated: 1 }),
    },
    { card_id: "gone", title: null, conversations: 1, ...shares({ unresolved: 1 }) },
  ];

  it("show each card's counts and rates, a removed card by its id", () => {
    const html = renderToStaticMarkup(<CardResolutionTable rows={rows} onPick={() => {}} />);
    expect(html.match(/data-card=/g)).toHaveLength(2);
    expect(html).toContain('href="/admin/cards/refunds"');
    expect(html).toContain(">Refunds</a>");
    expect(html).toContain("gone (removed)");
    expect(html).toContain(">75.0%</td>");
    expect(html).toContain(">25.0%</td>");
  });

  it("pick the card whose conversations are listed", () => {
    (globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;
    const picked = vi.fn();
    const host = document.createElement("div");
    const root = createRoot(host);
    act(() => root.render(<CardResolutionTable rows={rows} onPick={picked} />));
    host.querySelector<HTMLButtonElement>('[data-card="gone"] button')?.click();
    expect(picked).toHaveBeenCalledWith("gone");
    act(() => root.unmount());
  });

  it("say why the table is empty", () => {
    expect(renderToStaticMarkup(<CardResolutionTable rows={[]} onPick={() => {}} />)).toContain(
      NO_TOP_CARDS,
    );
  });
});

describe("the outcomes per knowledge-gap group", () => {
  const group: GapResolution = {
    verdict: "gap",
    group_id: "m-office",
    question: "where is your office in berlin",
    questions: 5,
    conversations: 4,
    ...shares({ unresolved: 3, escalated: 1 }),
  };
  const rows = [
    group,
    { ...group, verdict: "answered_badly" as const, group_id: "m-refunds", question: "refunds" },
  ];

  it("show each group's list, counts and rates", () => {
    const html = renderToStaticMarkup(<GapResolutionTable rows={rows} onPick={() => {}} />);
    expect(html).toContain("Knowledge gap");
    expect(html).toContain("Answered badly");
    expect(html.match(/data-group=/g)).toHaveLength(2);
    expect(html).toContain(">25.0%</td>");
    const empty = renderToStaticMarkup(<GapResolutionTable rows={[]} onPick={() => {}} />);
    expect(empty).toContain(NO_GAP_GROUPS);
  });

  it("pick the group whose conversations are listed, as a filtered list", async () => {
    (globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;
    const picked = vi.fn();
    const host = document.createElement("div");
    const root = createRoot(host);
    act(() => root.render(<GapResolutionTable rows={rows} onPick={picked} />));
    host.querySelector<HTMLButtonElement>('[data-group="m-refunds"] button')?.click();
    expect(picked).toHaveBeenCalledWith(rows[1]);

    const urls: string[] = [];
    vi.stubGlobal(
      "fetch",
      vi.fn((url: string) => {
        urls.push(url);
        const listed = [
          {
            conversation_id: "c9",
            user_id: 1,
            user_name: "mia",
            title: "refunds",
            created_at: "2026-03-09T10:00:00Z",
            last_at: "2026-03-09T10:05:00Z",
            outcome: "escalated",
            top_card_id: null,
          },
        ];
        return Promise.resolve(
          new Response(JSON.stringify(listed), {
            status: 200,
            headers: { "Content-Type": "application/json" },
          }),
        );
      }),
    );
    const behind: Behind = { kind: "gap", groupId: "m-refunds" };
    await act(async () => {
      root.render(
        <ConversationsBehind client={new ApiClient("t")} outcome="escalated" behind={behind} />,
      );
      await Promise.resolve();
    });
    await vi.waitFor(() => expect(host.textContent).toContain("mia"));
    expect(urls).toEqual([
      "/api/v1/admin/analytics/resolution/conversations?outcome=escalated&gap_group=m-refunds&limit=200",
    ]);
    expect(host.querySelector('a[href="/admin/conversations/c9"]')).not.toBeNull();
    expect(noneBehind(behind)).toContain("knowledge-gap group");
    act(() => root.unmount());
    vi.unstubAllGlobals();
  });
});
