// @vitest-environment happy-dom
/**
 * The knowledge-gaps page narrowed to one audience: the group typed in the Audience filter is
 * the report's `audience` (fetch mocked, the client against the API contract).
 */
import { act } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

import { AdminGaps } from "../src/admin/AdminGaps";
import { ApiClient } from "../src/api/client";
import type { KnowledgeGapReport } from "../src/api/types";

const report = (audience: string | null): KnowledgeGapReport => ({
  period: "week",
  low_support_below: 0.5,
  min_coverage: 0.7,
  since: null,
  until: null,
  audience,
  questions: 0,
  truncated: false,
  groups: [],
  answered_badly_questions: 0,
  answered_badly: [],
});

describe("the knowledge-gaps audience filter", () => {
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
        const audience = new URL(input, "http://x").searchParams.get("audience");
        const gaps = input.startsWith("/api/v1/admin/analytics/knowledge-gaps");
        return Promise.resolve(
          new Response(JSON.stringify(gaps ? report(audience) : { detail: "no such route" }), {
            status: gaps ? 200 : 404,
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

  it("asks for every member's questions, then for the group typed", async () => {
    await act(async () => {
      root.render(<AdminGaps client={new ApiClient("t0k")} />);
      await Promise.resolve();
    });
    await vi.waitFor(() => expect(urls.some((u) => u.includes("knowledge-gaps"))).toBe(true));
    expect(urls.filter((u) => u.includes("audience="))).toEqual([]);
    const input = container.querySelector<HTMLInputElement>("#gaps-audience");
    expect(input).not.toBeNull();
    expect(container.querySelector("label[for=gaps-audience]")?.textContent).toBe("Audience");
    await act(async () => {
      // React tracks the value it set: set it the way typing does, then announce the input.
      const descriptor = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value");
      descriptor?.set?.call(input, " enterprise ");
      input?.dispatchEvent(new Event("input", { bubbles: true }));
      await Promise.resolve();
    });
    await vi.waitFor(() =>
      expect(urls).toContain(
        "/api/v1/admin/analytics/knowledge-gaps?period=week&audience=enterprise",
      ),
    );
  });
});
