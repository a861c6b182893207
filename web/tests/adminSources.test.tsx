import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";

import { SourcesTable } from "../src/admin/AdminConversationView";
import type { StoredSource, UnreadableStored } from "../src/api/types";

const good: StoredSource = {
  n: 1,
  card_id: "help-refunds",
  title: "Refunds",
  source_url: "https://help.example/refunds",
  metadata: { url: "https://help.example/refunds" },
};
const placeholder: UnreadableStored = {
  unreadable: true,
  title: "stored source is not an object (a string)",
  raw: '"{\\"card_id\\": \\"x\\"}"',
};

describe("SourcesTable", () => {
  it("renders a marked row for an unreadable stored source and the readable ones as usual", () => {
    const markup = renderToStaticMarkup(<SourcesTable sources={[placeholder, good]} />);
    expect(markup.match(/data-testid="unreadable-source"/g)).toHaveLength(1);
    expect(markup).toContain("stored source is not an object (a string)");
    expect(markup).toContain("help-refunds");
    expect(markup).toContain('href="https://help.example/refunds"');
  });

  it("survives items an older server sends unmarked (null, strings, numbers)", () => {
    const items = [null, "oops", 7, good] as unknown as StoredSource[];
    const markup = renderToStaticMarkup(<SourcesTable sources={items} />);
    expect(markup.match(/data-testid="unreadable-source"/g)).toHaveLength(3);
    expect(markup).toContain("&quot;oops&quot;");
  });
});
