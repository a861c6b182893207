import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";

import {
  ACTIONS,
  AuditTable,
  NO_AUDIT_LINES,
  RetentionSummary,
  actionText,
  keptFor,
} from "../src/admin/AdminAudit";
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
