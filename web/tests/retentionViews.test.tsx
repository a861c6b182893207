// @vitest-environment happy-dom
/**
 * Messages whose words retention removed (docs/privacy.md: the content is left empty): the
 * member's chat, the admin conversation view and the Resolution page say so instead of an
 * empty bubble, an empty block or a blank cell; an answer whose question is gone offers no
 * "Save as test question", and says why.
 */
import { act } from "react";
import { createRoot } from "react-dom/client";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it, vi } from "vitest";

import { AdminTurn, questionRemoval } from "../src/admin/AdminConversationView";
import {
  AdminResolution,
  GapResolutionTable,
  drilldownFromSearch,
  searchForDrilldown,
} from "../src/admin/AdminResolution";
import { removalOf } from "../src/admin/removed";
import { ApiClient } from "../src/api/client";
import type { AdminMessage, CardResolution, GapResolution } from "../src/api/types";
import type { Message } from "../src/api/wire";
import { fromMessage } from "../src/chat/state";
import { NOT_FOUND_LABEL, REMOVED_MESSAGE, REPHRASE_HINT, Turn } from "../src/member/Turn";

function stored(role: "user" | "assistant", content: string): Message {
  return {
    id: role === "user" ? "m1" : "m2",
    role,
    content,
    answer_status: role === "assistant" ? "not_found" : null,
    sources: [],
    hybrid_path: null,
    feedback: null,
    regenerated_from: null,
    created_at: "2026-11-30T12:00:00Z",
  };
}

function adminMessage(role: "user" | "assistant", content: string, seq: number): AdminMessage {
  return {
    id: `m${seq}`,
    seq,
    role,
    content,
    sources: [],
    hybrid_path: null,
    timings: null,
    generator: role === "assistant" ? "extractive" : null,
    answer_status: role === "assistant" ? "answered" : null,
    created_at: "2026-11-30T12:00:00Z",
    regenerated_from: null,
    feedback: null,
  };
}

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

describe("the member's chat after retention", () => {
  it("says a question's words were removed, in place of an empty bubble", () => {
    const html = renderToStaticMarkup(<Turn turn={fromMessage(stored("user", ""))} />);
    expect(html).toContain(REMOVED_MESSAGE);
    expect(renderToStaticMarkup(<Turn turn={fromMessage(stored("user", "hi?"))} />)).not.toContain(
      REMOVED_MESSAGE,
    );
  });

  it("says an answer's words were removed, under its label, with no rephrase hint", () => {
    const html = renderToStaticMarkup(<Turn turn={fromMessage(stored("assistant", ""))} />);
    expect(html).toContain(NOT_FOUND_LABEL);
    expect(html).toContain(REMOVED_MESSAGE);
    expect(html).not.toContain(REPHRASE_HINT);
  });
});

describe("the admin conversation view after retention", () => {
  const owner = { user_name: "pat" };

  it("names what removed the words (retention, or an erasure for a pseudonym's rows)", () => {
    expect(removalOf("", owner)).toBe("retention");
    expect(removalOf("", { user_name: "erased-1a2b" })).toBe("erasure");
    expect(removalOf("words", owner)).toBeNull();
    const question = renderToStaticMarkup(
      <AdminTurn message={adminMessage("user", "", 1)} removed="retention" />,
    );
    expect(question).toContain("(removed under retention)");
    const answer = renderToStaticMarkup(
      <AdminTurn message={adminMessage("assistant", "", 2)} removed="erasure" />,
    );
    expect(answer).toContain("(erased)");
  });

  it("offers no test question for an answer whose question is gone, and says why", () => {
    const messages = [adminMessage("user", "", 1), adminMessage("assistant", "", 2)];
    expect(questionRemoval(messages, 1, owner)).toBe("retention");
    expect(questionRemoval([adminMessage("user", "q?", 1), messages[1]!], 1, owner)).toBeNull();
    const html = renderToStaticMarkup(
      <AdminTurn
        message={messages[1]!}
        removed="retention"
        questionRemoved="retention"
        onSaveQuestion={vi.fn()}
      />,
    );
    expect(html).not.toContain("Save as test question");
    expect(html).toContain(
      "Not offered as a test question: its question was removed under retention.",
    );
  });
});

const card: CardResolution = {
  card_id: "help-refunds",
  title: "Refund timing",
  conversations: 2,
  counts: { resolved: 1, escalated: 1, unresolved: 0, abandoned: 0, open: 0 },
  decided: 2,
  resolution_rate: 0.5,
  escalation_rate: 0.5,
  unresolved_rate: 0,
  abandoned_rate: 0,
};

const removedGroup: GapResolution = {
  ...card,
  verdict: "gap",
  group_id: "g-removed",
  question: "",
  questions: 3,
};

describe("the Resolution page", () => {
  it("names a gap group whose questions retention removed", () => {
    const html = renderToStaticMarkup(
      <GapResolutionTable rows={[removedGroup]} onPick={vi.fn()} />,
    );
    expect(html).toContain("(removed under retention)");
  });

  it("keeps the drill-down in the address", () => {
    for (const search of ["", "?outcome=resolved", "?card=help-refunds", "?outcome=open&gap=g1"]) {
      expect(searchForDrilldown(drilldownFromSearch(search))).toBe(search);
    }
    expect(drilldownFromSearch("?outcome=bogus")).toEqual({
      outcome: "escalated",
      behind: { kind: "any" },
    });
  });

  it("opens the drill-down the address names, the card by its title", async () => {
    window.history.replaceState(null, "", "/admin/resolution?outcome=resolved&card=help-refunds");
    const urls: string[] = [];
    vi.stubGlobal(
      "fetch",
      vi.fn((url: string) => {
        urls.push(url);
        const body = url.endsWith("/resolution/cards")
          ? [card]
          : url.endsWith("/resolution/gaps")
            ? [removedGroup]
            : url.includes("/resolution/conversations")
              ? []
              : {
                  period: "week",
                  window_hours: 24,
                  since: null,
                  until: null,
                  periods: [],
                  totals: null,
                };
        return Promise.resolve(
          new Response(JSON.stringify(body), {
            status: 200,
            headers: { "Content-Type": "application/json" },
          }),
        );
      }),
    );
    const host = document.createElement("div");
    document.body.append(host);
    const root = createRoot(host);
    await act(async () => {
      root.render(<AdminResolution client={new ApiClient("t")} />);
      await Promise.resolve();
    });
    await vi.waitFor(() =>
      expect(host.querySelector('[data-testid="resolution-card-filter"]')?.textContent).toContain(
        "Refund timing",
      ),
    );
    expect(urls.some((u) => u.includes("outcome=resolved") && u.includes("=help-refunds"))).toBe(
      true,
    );
    const select = host.querySelector<HTMLSelectElement>("#resolution-outcome")!;
    expect(select.value).toBe("resolved");
    // "Any card" drops the card from the address; the outcome stays.
    const any = [...host.querySelectorAll("button")].find((b) => b.textContent === "Any card")!;
    act(() => any.click());
    expect(window.location.search).toBe("?outcome=resolved");
    act(() => root.unmount());
    host.remove();
    vi.unstubAllGlobals();
  });
});
