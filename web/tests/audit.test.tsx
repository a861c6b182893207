// @vitest-environment happy-dom
import { act } from "react";
import { createRoot } from "react-dom/client";
import { renderToStaticMarkup } from "react-dom/server";
import { afterEach, describe, expect, it, vi } from "vitest";

import {
  ACTIONS,
  AdminAudit,
  AuditTable,
  NO_AUDIT_LINES,
  RetentionSummary,
  actionFromSearch,
  actionText,
  detailText,
  emptyAuditText,
  keptFor,
  noLinesOf,
  searchForAction,
} from "../src/admin/AdminAudit";
import { ApiClient } from "../src/api/client";
import type { AuditEntryPublic, AuditPage } from "../src/api/types";
import { parseRoute } from "../src/router";
import { routePageName } from "../src/shell/title";

function line(change: Partial<AuditEntryPublic> = {}): AuditEntryPublic {
  return {
    id: 7,
    at: "2026-03-02T11:00:00Z",
    actor: "ada@admins.test-1a2b3c",
    actor_user_id: 3,
    via: "admin_proxy",
    action: "conversation.read",
    target: "conversation:c-1",
    address: "10.0.0.7",
    detail: { user_id: 5 },
    ...change,
  };
}

function page(entries: AuditEntryPublic[], total = entries.length): AuditPage {
  return { total, limit: 50, offset: 0, entries };
}

describe("the audit log page", () => {
  it("shows what each change was: the line's details as key: value pairs, cut when long", () => {
    expect(detailText({ disabled: true })).toBe("disabled: true");
    expect(detailText({ playbook_version: 3, restored_from: 1 })).toBe(
      "playbook_version: 3; restored_from: 1",
    );
    expect(detailText({})).toBe("—");
    const long = detailText({ removed: "x".repeat(500) });
    expect(long.length).toBe(200);
    expect(long.endsWith("…")).toBe(true);
    const html = renderToStaticMarkup(
      <AuditTable
        page={{ total: 1, limit: 50, offset: 0, entries: [line({ detail: { disabled: true } })] }}
        onPage={() => undefined}
      />,
    );
    expect(html).toContain("disabled: true");
  });

  it("is routed at /admin/audit and titled", () => {
    expect(parseRoute("/admin/audit")).toEqual({ name: "admin-audit" });
    expect(routePageName({ name: "admin-audit" }, true)).toBe("Admin · Audit log");
  });

  it("shows who read what, how, when and from where", () => {
    const html = renderToStaticMarkup(<AuditTable page={page([line()])} onPage={() => {}} />);
    for (const text of ["ada@admins.test-1a2b3c", "admin_proxy", "Read a conversation"]) {
      expect(html).toContain(text);
    }
    expect(html).toContain("conversation:c-1");
    expect(html).toContain("10.0.0.7");
    expect(html).toContain("1 line<");
  });

  it("says so when the log is empty, and pages a long one", () => {
    const empty = renderToStaticMarkup(<AuditTable page={page([])} onPage={() => {}} />);
    expect(empty).toContain(NO_AUDIT_LINES.slice(0, 30));
    const long = renderToStaticMarkup(
      <AuditTable page={page([line(), line({ id: 8, address: null })], 120)} onPage={() => {}} />,
    );
    expect(long).toContain("120 lines");
    expect(long).toContain("Next");
    expect(long).toContain("—"); // a line without an address
  });

  it("names every action the server writes, and an unknown one as it is", () => {
    expect(actionText("erasure")).toBe("Erasure");
    expect(actionText("something.new")).toBe("something.new");
    expect(Object.keys(ACTIONS)).toContain("cards.change");
  });

  it("shows the retention settings, unset ones in words", () => {
    expect(keptFor(90, "kept")).toBe("90 days");
    expect(keptFor(1, "kept")).toBe("1 day");
    const off = renderToStaticMarkup(
      <RetentionSummary settings={{ retention_days: null, audit_retention_days: null }} />,
    );
    expect(off).toContain("kept until a member&#x27;s data is erased");
    const on = renderToStaticMarkup(
      <RetentionSummary settings={{ retention_days: 30, audit_retention_days: 365 }} />,
    );
    expect(on).toContain("30 days");
    expect(on).toContain("365 days");
  });
});

describe("the audit log's filter", () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    window.history.replaceState(null, "", "/");
  });

  it("says the filter matched nothing, not that the log is empty", () => {
    const none = renderToStaticMarkup(
      <AuditTable page={page([])} onPage={() => {}} action="erasure" />,
    );
    expect(none).toContain("No line of this kind: nothing recorded as “Erasure” yet.");
    expect(none).not.toContain(NO_AUDIT_LINES.slice(0, 30));
    expect(emptyAuditText("")).toBe(NO_AUDIT_LINES);
    expect(emptyAuditText("export")).toBe(noLinesOf("export"));
  });

  it("is read from the query string and written back to it", () => {
    expect(actionFromSearch("?action=erasure")).toBe("erasure");
    expect(actionFromSearch("?action=cards.change&x=1")).toBe("cards.change");
    for (const search of ["", "?action=", "?action=nope", "?action=toString", "?other=1"]) {
      expect(actionFromSearch(search)).toBe("");
    }
    expect(searchForAction("")).toBe("");
    expect(searchForAction("knowledge_gaps.read")).toBe("?action=knowledge_gaps.read");
    for (const action of Object.keys(ACTIONS) as (keyof typeof ACTIONS)[]) {
      expect(actionFromSearch(searchForAction(action))).toBe(action);
    }
  });

  it("survives a reload: the page reads the filter from the address and keeps it there", async () => {
    (globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;
    window.history.replaceState(null, "", "/admin/audit?action=erasure");
    const urls: string[] = [];
    vi.stubGlobal(
      "fetch",
      vi.fn((url: string) => {
        urls.push(url);
        const body = url.startsWith("/api/v1/admin/retention")
          ? { retention_days: null, audit_retention_days: null }
          : page([]);
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
      root.render(<AdminAudit client={new ApiClient("t")} />);
      await Promise.resolve();
    });
    await vi.waitFor(() => expect(host.textContent).toContain("No line of this kind"));
    expect(urls).toContain("/api/v1/admin/audit?action=erasure&limit=50&offset=0");
    const select = host.querySelector<HTMLSelectElement>("#audit-action");
    expect(select?.value).toBe("erasure");
    act(() => {
      if (select) select.value = "export";
      select?.dispatchEvent(new Event("change", { bubbles: true }));
    });
    expect(window.location.pathname + window.location.search).toBe("/admin/audit?action=export");
    await vi.waitFor(() =>
      expect(urls).toContain("/api/v1/admin/audit?action=export&limit=50&offset=0"),
    );
    act(() => {
      if (select) select.value = "";
      select?.dispatchEvent(new Event("change", { bubbles: true }));
    });
    expect(window.location.search).toBe("");
    await vi.waitFor(() => expect(host.textContent).toContain(NO_AUDIT_LINES.slice(0, 30)));
    act(() => root.unmount());
    host.remove();
  });
});
