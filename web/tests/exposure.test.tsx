import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";

import {
  EMPTY_EXPOSURE,
  ExposureRanking,
  budgetText,
  exposureSummary,
  formatWindow,
  memberExposurePath,
  restrictedText,
} from "../src/admin/AdminExposure";
import {
  EMPTY_MEMBER_EXPOSURE,
  MemberExposure,
  cardExposure,
  memberHeading,
  memberTotals,
  newestFirst,
} from "../src/admin/AdminMemberExposure";
import type {
  ExposureMember,
  ExposureReport,
  ExposureTurn,
  MemberExposureReport,
} from "../src/api/types";
import { parseRoute } from "../src/router";

const BUDGET = { cards: 25, window_hours: 168 };

function member(change: Partial<ExposureMember> = {}): ExposureMember {
  return {
    user_id: "7",
    name: "mia",
    role: "member",
    turns: 4,
    cards: 12,
    corpus_share: 0.1,
    verbatim_sentences: 9,
    longest_span: 22,
    first_exposed: "2026-03-01T10:00:00Z",
    last_exposed: "2026-03-02T11:00:00Z",
    restricted_turns: 0,
    first_restricted: null,
    ...change,
  };
}

function ranking(members: ExposureMember[], total = members.length): ExposureReport {
  return {
    since: null,
    until: null,
    budget: BUDGET,
    internal_cards: 120,
    members_total: total,
    members,
  };
}

const turn: ExposureTurn = {
  message_id: "m1",
  conversation_id: "c 1/x",
  created_at: "2026-03-02T11:00:00Z",
  question: "I got charged twice for one label",
  restricted: null,
  cards: [
    {
      card_id: "playbook-duplicate-charges",
      title: "Duplicate charges playbook",
      cited: true,
      verbatim_sentences: 2,
      card_sentences: 9,
      longest_span: 22,
    },
  ],
};

function drillDown(change: Partial<MemberExposureReport> = {}): MemberExposureReport {
  return {
    since: null,
    until: null,
    budget: BUDGET,
    internal_cards: 120,
    member: member(),
    days: [
      { day: "2026-03-01", cards: 3, verbatim_sentences: 2, turns: 1, restricted_turns: 0 },
      { day: "2026-03-02", cards: 9, verbatim_sentences: 7, turns: 3, restricted_turns: 1 },
    ],
    turns_total: 30,
    offset: 0,
    limit: 25,
    turns: [turn, { ...turn, message_id: "m0", restricted: "exposure_budget", cards: [] }],
    ...change,
  };
}

describe("exposure routes", () => {
  it.each([
    ["/admin/exposure", { name: "admin-exposure" }],
    ["/admin/exposure/7", { name: "admin-member-exposure", userId: "7" }],
    ["/admin/exposure/7/x", { name: "not-found" }],
  ])("%s", (path, route) => {
    expect(parseRoute(path)).toEqual(route);
  });

  it("builds member paths that route back to the member", () => {
    expect(memberExposurePath("a/b")).toBe("/admin/exposure/a%2Fb");
    expect(parseRoute(memberExposurePath("a/b"))).toEqual({
      name: "admin-member-exposure",
      userId: "a/b",
    });
  });
});

describe("exposure texts", () => {
  it("states the budget in force, or that it is off", () => {
    expect(budgetText(BUDGET)).toBe(
      "Budget: 25 internal cards per member per 7 days; past it, a member's answers use external knowledge only.",
    );
    expect(budgetText({ cards: 1, window_hours: 36 })).toContain(
      "1 internal card per member per 36 hours",
    );
    expect(budgetText({ cards: 0, window_hours: 168 })).toBe(
      "The exposure budget is off: no member's answers are limited.",
    );
  });

  it("writes windows in days when whole, else hours", () => {
    expect(formatWindow(24)).toBe("1 day");
    expect(formatWindow(168)).toBe("7 days");
    expect(formatWindow(1)).toBe("1 hour");
    expect(formatWindow(1.5)).toBe("1.5 hours");
    expect(formatWindow(30)).toBe("30 hours");
  });

  it("flags restricted members only", () => {
    expect(restrictedText(member())).toBe("");
    const flagged = restrictedText(
      member({ restricted_turns: 3, first_restricted: "2026-03-02T10:00:00Z" }),
    );
    expect(flagged).toMatch(/^3 answers restricted since /);
    expect(flagged).not.toContain("—");
  });

  it("summarises the ranking and says when only the top is shown", () => {
    expect(exposureSummary(ranking([member()]))).toBe(
      "1 member received internal knowledge (of 120 internal cards).",
    );
    expect(exposureSummary(ranking([member()], 40))).toBe(
      "40 members received internal knowledge (of 120 internal cards); the 1 most exposed are shown.",
    );
  });

  it("describes a member's totals and one card's exposure", () => {
    expect(memberTotals(member(), 120)).toBe(
      "12 internal cards (10.0% of 120), 9 sentences repeated verbatim, in 4 answers; longest shared span 22 words.",
    );
    expect(memberTotals(member({ corpus_share: null, cards: 1, turns: 1 }), 0)).toMatch(
      /^1 internal card, .* in 1 answer;/,
    );
    expect(cardExposure(turn.cards[0]!)).toBe("cited · 2 of 9 sentences verbatim · span 22 words");
    expect(cardExposure({ ...turn.cards[0]!, cited: false, verbatim_sentences: 0 })).toBe(
      "not cited · no sentence verbatim · span 22 words",
    );
  });

  it("names the member in the heading once loaded", () => {
    expect(memberHeading(null)).toBe("Member exposure");
    expect(memberHeading(drillDown())).toBe("Exposure: mia");
  });

  it("lists days newest first without changing the input", () => {
    const days = drillDown().days;
    expect(newestFirst(days).map((d) => d.day)).toEqual(["2026-03-02", "2026-03-01"]);
    expect(days[0]!.day).toBe("2026-03-01");
  });
});

describe("the exposure ranking page", () => {
  it("says in a sentence that nobody was exposed, with no empty table", () => {
    const html = renderToStaticMarkup(<ExposureRanking report={ranking([])} />);
    expect(html).toContain(EMPTY_EXPOSURE);
    expect(html).not.toContain("<table");
    expect(html).toContain("Budget: 25 internal cards");
  });

  it("ranks members with links to their drill-down and flags the restricted ones", () => {
    const rows = [
      member({ restricted_turns: 2, first_restricted: "2026-03-02T10:00:00Z" }),
      member({ user_id: "8", name: "<b>bo</b>", cards: 1, corpus_share: 1 / 120, role: "admin" }),
    ];
    const html = renderToStaticMarkup(<ExposureRanking report={ranking(rows)} />);
    expect(html).toContain('href="/admin/exposure/7"');
    expect(html).toContain('href="/admin/exposure/8"');
    expect(html).toContain("&lt;b&gt;bo&lt;/b&gt;"); // names are text, never markup
    expect(html).toContain("10.0%");
    expect(html).toContain("0.8%");
    expect(html.match(/class="exposure-row flagged"/g)).toHaveLength(1);
    expect(html).toContain("2 answers restricted since");
    expect(html).toContain('<span class="badge">admin</span>');
  });
});

describe("a member's drill-down", () => {
  it("shows totals, the alert, days newest first and turns linking to their conversation", () => {
    const report = drillDown({
      member: member({ restricted_turns: 1, first_restricted: "2026-03-02T10:00:00Z" }),
    });
    const html = renderToStaticMarkup(<MemberExposure report={report} onPage={() => {}} />);
    expect(html).toContain('data-testid="member-restricted"');
    expect(html.indexOf("2026-03-02")).toBeLessThan(html.indexOf("2026-03-01"));
    expect(html).toContain('href="/admin/conversations/c%201%2Fx"');
    expect(html).toContain("I got charged twice for one label");
    expect(html).toContain("playbook-duplicate-charges");
    expect(html).toContain("restricted: external knowledge only");
    expect(html).toContain("1–25 of 30");
  });

  it("says in a sentence when the member received nothing", () => {
    const report = drillDown({
      member: member({ cards: 0, turns: 0 }),
      days: [],
      turns: [],
      turns_total: 0,
    });
    const html = renderToStaticMarkup(<MemberExposure report={report} onPage={() => {}} />);
    expect(html).toContain(EMPTY_MEMBER_EXPOSURE);
    expect(html).not.toContain("<table");
    expect(html).not.toContain('data-testid="member-restricted"');
  });
});
