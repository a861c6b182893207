import { renderToStaticMarkup } from "react-dom/server";
import { afterEach, describe, expect, it, vi } from "vitest";

import { ApiClient, ApiError } from "../src/api/client";
import type { ConversationSummary } from "../src/api/types";
import { emptyText, searchStatus } from "../src/member/ConversationList";
import { conversationPath, isPlainClick, parseRoute } from "../src/router";
import { ConversationRow, conversationLabel, listDate } from "../src/shell/ConversationRow";
import { appendPage, loadPages, PAGE_SIZE, pagesFor } from "../src/shell/conversationPages";
import { documentTitle, routePageName } from "../src/shell/title";

function summary(id: string, title = `Conversation ${id}`): ConversationSummary {
  return {
    id,
    title,
    created_at: "2026-01-02T10:00:00Z",
    updated_at: "2026-01-02T10:00:00Z",
    message_count: 2,
  };
}

const many = (from: number, count: number): ConversationSummary[] =>
  Array.from({ length: count }, (_, i) => summary(`c${from + i}`));

describe("conversation pages", () => {
  it("offers older ones while a page comes back full", () => {
    const first = appendPage(null, many(0, PAGE_SIZE));
    expect(first.items).toHaveLength(PAGE_SIZE);
    expect(first.more).toBe(true);
    const second = appendPage(first, many(PAGE_SIZE, 5));
    expect(second.items.map((c) => c.id)).toEqual(many(0, PAGE_SIZE + 5).map((c) => c.id));
    expect(second.more).toBe(false);
    expect(appendPage(null, []).more).toBe(false);
  });

  it("lists a conversation once when the offsets shifted between two pages", () => {
    // A new conversation pushed c49 from the first page to the top of the second.
    const first = appendPage(null, many(0, PAGE_SIZE));
    const second = appendPage(first, many(PAGE_SIZE - 1, PAGE_SIZE));
    const ids = second.items.map((c) => c.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toHaveLength(2 * PAGE_SIZE - 1);
    expect(second.more).toBe(true);
  });

  it("reloads as many pages as rows are shown", () => {
    expect(pagesFor(0)).toBe(1);
    expect(pagesFor(50)).toBe(1);
    expect(pagesFor(51)).toBe(2);
    expect(pagesFor(120)).toBe(3);
  });

  it("requests each page with limit, offset and the search, and stops at a short one", async () => {
    const asked: unknown[] = [];
    const client = {
      conversations: (p: { limit?: number; offset?: number; q?: string }) => {
        asked.push(p);
        return Promise.resolve(p.offset === 0 ? many(0, PAGE_SIZE) : many(PAGE_SIZE, 3));
      },
    } as unknown as ApiClient;
    const pages = await loadPages(client, "label", 3);
    expect(asked).toEqual([
      { limit: PAGE_SIZE, offset: 0, q: "label" },
      { limit: PAGE_SIZE, offset: PAGE_SIZE, q: "label" },
      { limit: PAGE_SIZE, offset: 2 * PAGE_SIZE, q: "label" },
    ]);
    expect(pages.items).toHaveLength(PAGE_SIZE + 3);
    expect(pages.more).toBe(false);
  });
});

describe("the list's words", () => {
  it("says how many conversations a search found", () => {
    expect(searchStatus(0, false)).toBe("0 conversations match.");
    expect(searchStatus(1, false)).toBe("1 conversation matches.");
    expect(searchStatus(7, false)).toBe("7 conversations match.");
    expect(searchStatus(50, true)).toBe("50 or more conversations match.");
  });

  it("tells an empty history from an empty search", () => {
    expect(emptyText("")).toBe("No conversations yet.");
    expect(emptyText("refund")).toBe("No conversations match your search.");
  });

  it("names an untitled conversation", () => {
    expect(conversationLabel(summary("a", ""))).toBe("Untitled");
    expect(conversationLabel(summary("a", "  "))).toBe("Untitled");
    expect(conversationLabel(summary("a", "Refunds"))).toBe("Refunds");
  });
});

describe("a conversation in the list", () => {
  const render = (c: ConversationSummary, current = false): string =>
    renderToStaticMarkup(
      <ConversationRow
        conversation={c}
        current={current}
        onOpen={() => undefined}
        onRename={() => Promise.resolve()}
        onDelete={() => Promise.resolve()}
      />,
    );

  it("is a link to its path, marked when it is open", () => {
    const html = render(summary("0b6c9f5e-1d1a-4b5e-9c57-6f1d0e9b2a11", "Refunds"), true);
    expect(html).toContain('href="/c/0b6c9f5e-1d1a-4b5e-9c57-6f1d0e9b2a11"');
    expect(html).toContain('aria-current="page"');
    expect(html).toContain('aria-label="Actions for Refunds"');
    expect(html).toContain('aria-expanded="false"');
    expect(render(summary("a"))).not.toContain("aria-current");
  });

  it("shows a hostile title as text", () => {
    const html = render(summary("a", '<img src=x onerror="alert(1)">'));
    expect(html).not.toContain("<img");
    expect(html).toContain("&lt;img src=x onerror=");
  });

  it("encodes the id into its path", () => {
    expect(conversationPath("a/b?c")).toBe("/c/a%2Fb%3Fc");
    expect(parseRoute(conversationPath("a/b?c"))).toEqual({
      name: "chat",
      conversationId: "a/b?c",
    });
  });
});

describe("isPlainClick", () => {
  const click = { button: 0, metaKey: false, ctrlKey: false, shiftKey: false, altKey: false };
  it("follows a plain primary click in the app", () => {
    expect(isPlainClick({ ...click, defaultPrevented: false })).toBe(true);
  });
  it.each([
    ["Ctrl", { ctrlKey: true }],
    ["Cmd", { metaKey: true }],
    ["Shift", { shiftKey: true }],
    ["Alt", { altKey: true }],
    ["middle button", { button: 1 }],
    ["handled already", { defaultPrevented: true }],
  ])("leaves a click with %s to the browser", (_name, change) => {
    expect(isPlainClick({ ...click, defaultPrevented: false, ...change })).toBe(false);
  });
});

describe("tab titles", () => {
  it("name the page, then the app", () => {
    expect(documentTitle("Refund window")).toBe("Refund window - citewall");
    expect(documentTitle("  ")).toBe("citewall");
    expect(documentTitle(null)).toBe("citewall");
  });

  it("name each admin page, and say when a page is not for this member", () => {
    expect(routePageName(parseRoute("/admin/events"), true)).toBe("Admin · Retrieval events");
    expect(routePageName(parseRoute("/admin/analytics"), true)).toBe("Admin · Analytics");
    expect(routePageName(parseRoute("/admin/conversations/x"), true)).toBe("Admin · Conversation");
    expect(routePageName(parseRoute("/admin/exposure/7"), true)).toBe("Admin · Member exposure");
    expect(routePageName(parseRoute("/admin/events"), false)).toBe("Administrators only");
    expect(routePageName(parseRoute("/nowhere/at/all"), true)).toBe("Page not found");
  });
});

describe("ApiClient conversation calls", () => {
  afterEach(() => vi.unstubAllGlobals());

  function stubFetch(response: () => Response): ReturnType<typeof vi.fn> {
    const fetchMock = vi.fn(() => Promise.resolve(response()));
    vi.stubGlobal("fetch", fetchMock);
    return fetchMock;
  }
  const json = (body: unknown, status = 200): Response =>
    new Response(JSON.stringify(body), {
      status,
      headers: { "Content-Type": "application/json" },
    });
  const call = (fetchMock: ReturnType<typeof vi.fn>): [string, RequestInit] =>
    fetchMock.mock.calls[0] as [string, RequestInit];

  it("pages and searches the list", async () => {
    const fetchMock = stubFetch(() => json([]));
    const client = new ApiClient("t0k");
    await client.conversations({ limit: 50, offset: 100, q: "label refund" });
    expect(call(fetchMock)[0]).toBe("/api/v1/conversations?limit=50&offset=100&q=label+refund");
    await client.conversations({ limit: 50, offset: 0, q: "" });
    expect(fetchMock.mock.calls[1]?.[0]).toBe("/api/v1/conversations?limit=50&offset=0");
  });

  it("renames with PATCH and a title", async () => {
    const renamed = summary("c1", "New name");
    const fetchMock = stubFetch(() => json(renamed));
    const result = await new ApiClient("t0k").renameConversation("c1", "New name");
    const [url, init] = call(fetchMock);
    expect(url).toBe("/api/v1/conversations/c1");
    expect(init.method).toBe("PATCH");
    expect(JSON.parse(init.body as string)).toEqual({ title: "New name" });
    expect((init.headers as Record<string, string>)["Content-Type"]).toBe("application/json");
    expect(result).toEqual(renamed);
  });

  it("deletes with DELETE and reads the 204 as no body", async () => {
    const fetchMock = stubFetch(() => new Response(null, { status: 204 }));
    await expect(new ApiClient("t0k").deleteConversation("a/b")).resolves.toBeUndefined();
    const [url, init] = call(fetchMock);
    expect(url).toBe("/api/v1/conversations/a%2Fb");
    expect(init.method).toBe("DELETE");
    expect(init.body).toBeUndefined();
  });

  it("turns a refusal into an ApiError with the server's words", async () => {
    stubFetch(() => json({ detail: "conversation 'x' not found" }, 404));
    const error = await new ApiClient("t0k").deleteConversation("x").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(404);
    expect((error as ApiError).message).toBe("conversation 'x' not found");
  });
});

describe("listDate", () => {
  const now = new Date(2026, 10, 28, 18, 30);
  it("shows the time today, the day this year, the full date before", () => {
    expect(listDate(new Date(2026, 10, 28, 9, 5).toISOString(), now, "en-US")).toBe("9:05 AM");
    expect(listDate(new Date(2026, 2, 3, 9, 5).toISOString(), now, "en-US")).toBe("Mar 3");
    expect(listDate(new Date(2025, 11, 31, 9, 5).toISOString(), now, "en-US")).toBe("Dec 31, 2025");
  });
  it("leaves text that is not a date as it is", () => {
    expect(listDate("yesterday", now)).toBe("yesterday");
  });
});
