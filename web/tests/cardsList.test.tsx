// @vitest-environment happy-dom
/**
 * The Cards list: a disabled card (served to nobody) carries a "disabled" badge, and the search
 * is read from and kept in the address (`/admin/cards?q=refund`).
 */
import { act } from "react";
import { createRoot } from "react-dom/client";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it, vi } from "vitest";

import { AdminCards, CardsTable, searchFromAddress } from "../src/admin/AdminCards";
import { ApiClient } from "../src/api/client";
import type { Card } from "../src/api/types";

const card = (change: Partial<Card>): Card => ({
  id: "help-refunds",
  title: "Refund timing",
  external: true,
  metadata: {},
  ...change,
});

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

describe("the Cards list", () => {
  it("marks a disabled card, and only that one", () => {
    const html = renderToStaticMarkup(
      <CardsTable
        page={{
          cards: [
            card({ disabled_at: "2026-11-30T12:00:00Z", disabled_by: "ada" }),
            card({ id: "help-labels", title: "Labels" }),
          ],
          total: 2,
          limit: 25,
          offset: 0,
        }}
        empty=""
        onPage={() => undefined}
      />,
    );
    expect(html.match(/data-testid="card-disabled"/g)).toHaveLength(1);
    expect(html).toContain(">disabled<");
  });

  it("reads the search from the address and keeps a new one there", async () => {
    expect(searchFromAddress("?q=%20refund%20")).toBe("refund");
    expect(searchFromAddress("")).toBe("");
    window.history.replaceState(null, "", "/admin/cards?q=refund");
    const urls: string[] = [];
    vi.stubGlobal(
      "fetch",
      vi.fn((url: string) => {
        urls.push(url);
        return Promise.resolve(
          new Response(JSON.stringify({ cards: [card({})], total: 1, limit: 25, offset: 0 }), {
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
      root.render(<AdminCards client={new ApiClient("t")} />);
      await Promise.resolve();
    });
    await vi.waitFor(() => expect(host.textContent).toContain("Refund timing"));
    expect(urls[0]).toContain("q=refund");
    expect(host.querySelector<HTMLInputElement>("#card-q")!.value).toBe("refund");

    const input = host.querySelector<HTMLInputElement>("#card-q")!;
    act(() => {
      // React tracks the value it set: set it the way typing does, then announce the input.
      Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value")?.set?.call(
        input,
        "labels",
      );
      input.dispatchEvent(new Event("input", { bubbles: true }));
    });
    await act(async () => {
      host.querySelector<HTMLFormElement>("form")!.requestSubmit();
      await Promise.resolve();
    });
    expect(window.location.search).toBe("?q=labels");
    await vi.waitFor(() => expect(urls.at(-1)).toContain("q=labels"));
    act(() => root.unmount());
    host.remove();
    vi.unstubAllGlobals();
  });
});
