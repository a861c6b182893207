// @vitest-environment happy-dom
/**
 * The playbook editor: the form's fields as the server takes them, a refusal shown beside the
 * field it names, and a preview that renders Markdown without raw HTML.
 */
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";

import { EMPTY_DRAFT, PlaybookEditor, writeOf } from "../src/admin/AdminPlaybooks";
import { fieldProblems } from "../src/api/client";
import { parseRoute } from "../src/router";

describe("playbooks", () => {
  it("sends an empty reply as none and splits the groups", () => {
    const w = writeOf({
      ...EMPTY_DRAFT,
      title: " T ",
      body: "b",
      reply: "  ",
      audiences: "a, b c",
    });
    expect(w).toEqual({ title: "T", body: "b", reply: null, audiences: ["a", "b", "c"] });
  });

  it("keys a 422's problems by field", () => {
    const body = { detail: [{ loc: ["body", "title"], msg: "too short", type: "card" }] };
    expect(fieldProblems(body)).toEqual({ title: "too short" });
    expect(fieldProblems({ detail: "no" })).toEqual({});
  });

  it("routes the list, a new playbook and one playbook", () => {
    expect(parseRoute("/admin/playbooks")).toEqual({ name: "admin-playbooks" });
    expect(parseRoute("/admin/playbooks/new")).toEqual({ name: "admin-playbook", id: null });
    expect(parseRoute("/admin/playbooks/pb-x")).toEqual({ name: "admin-playbook", id: "pb-x" });
  });

  it("renders the preview without raw HTML and the history with rollbacks", () => {
    const current = {
      id: "pb-x",
      version: 2,
      title: "X",
      body: "# Steps\n\n<script>alert(1)</script> **bold**",
      reply: "Hi.",
      audiences: [],
      saved_by: "ada",
      saved_at: null,
      restored_from: null,
      disabled: false,
      in_catalogue: true,
    };
    const html = renderToStaticMarkup(
      <PlaybookEditor
        current={current}
        versions={[current, { ...current, version: 1 }]}
        onSave={() => Promise.resolve(current)}
        onRollback={() => Promise.resolve()}
      />,
    );
    expect(html).not.toContain("<script>");
    expect(html).toContain("<strong>bold</strong>");
    expect(html).toContain("Roll back to version 1");
    expect(html).not.toContain("Roll back to version 2");
  });
});
