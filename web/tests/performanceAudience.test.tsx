// @vitest-environment happy-dom
/**
 * Entry performance narrowed to one audience: the group typed in the Audience filter is the
 * rollup's `audience`, and each row says whom its card is for (fetch mocked, the client against
 * the API contract).
 */
import { act } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

import { AdminAnalytics } from "../src/admin/AdminAnalytics";
import { ApiClient } from "../src/api/client";
import type { EntryPerformance } from "../src/api/types";

const row = (card_id: string, audiences: string[]): EntryPerformance => ({
  card_id,
  period_start: "2026-11-30",
  times_retrieved: 2,
  times_cited: 1,
  cite_rate: 0.5,
  mean_rank: 1,
  last_cited: "2026-11-30T12:00:00Z",
  is_external: true,
  helpful: 0,
  unhelpful: 0,
  helpful_rate: null,
  handoffs: 0,
  audiences,
});

describe("the entry-performance audience filter", () => {
  let container: HTMLElement;
  let root: Root;
  const urls: string[] = [];

  beforeEach(() => {
    (globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;
    urls.length = 0;
    vi.stubGlobal(
      "fetch",
      vi.fn((input: string) => {
        urls.push(input);
        const perf = input.startsWith("/api/v1/admin/analytics/entry-performance");
        const body = perf ? [row("ent-sso", ["enterprise"]), row("refunds", [])] : null;
        return Promise.resolve(
          new Response(JSON.stringify(body ?? { detail: "no such route" }), {
            status: body ? 200 : 404,
            headers: { "Content-Type": "application/json" },
          }),
        );
      }),
    );
    container = document.createElement("div");
    document.body.append(container);
    root = createRoot(container);
  });

  afterEach(() => {
    act(() => root.unmount());
    container.remove();
    vi.unstubAllGlobals();
  });

  it("asks for every member's figures, then for the group typed, and names each card's audiences", async () => {
    await act(async () => {
      root.render(<AdminAnalytics client={new ApiClient("t0k")} />);
      await Promise.resolve();
    });
    await vi.waitFor(() =>
      expect(container.querySelector("table.performance-table tbody tr")).not.toBeNull(),
    );
    expect(urls.filter((u) => u.includes("audience="))).toEqual([]);
    const cells = [...container.querySelectorAll("table.performance-table td.audiences")];
    expect(cells.map((c) => c.textContent)).toEqual(["enterprise", "every member"]);
    const input = container.querySelector<HTMLInputElement>("#performance-audience");
    expect(container.querySelector("label[for=performance-audience]")?.textContent).toBe(
      "Audience",
    );
    await act(async () => {
      // React tracks the value it set: set it the way typing does, then announce the input.
      const descriptor = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value");
      descriptor?.set?.call(input, " enterprise ");
      input?.dispatchEvent(new Event("input", { bubbles: true }));
      await Promise.resolve();
    });
    await vi.waitFor(() =>
      expect(urls).toContain(
        "/api/v1/admin/analytics/entry-performance?period=day&audience=enterprise",
      ),
    );
  });
});
