/**
 * The admin pages' one table: columns and rows, or one sentence when there is no row; what
 * goes with the table (a count, a pager) only with it; every admin table is one.
 */
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";

import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";

import { DataTable, type Column } from "../src/admin/DataTable";

interface Fruit {
  name: string;
  count: number;
}

const COLUMNS: readonly Column<Fruit>[] = [
  { header: "Name", cell: (f) => <b>{f.name}</b> },
  { header: "Count", numeric: true, className: "fruit-count", cell: (f) => f.count },
  { header: "Position", testId: "position", cell: (_, i) => i + 1 },
];

const html = (
  rows: readonly Fruit[],
  extra: Partial<Parameters<typeof DataTable<Fruit>>[0]> = {},
) =>
  renderToStaticMarkup(
    <DataTable
      label="Fruit"
      className="fruit-table"
      columns={COLUMNS}
      rows={rows}
      rowKey={(f) => f.name}
      empty="No fruit yet."
      header={<p className="count">{rows.length} fruit</p>}
      footer={<nav className="pager">pages</nav>}
      {...extra}
    />,
  );

describe("DataTable", () => {
  it("draws a header row and one row per item, figures right-aligned", () => {
    const markup = html([
      { name: "apple", count: 3 },
      { name: "pear", count: 12 },
    ]);
    expect(markup).toContain(
      '<div class="table-wrap" tabindex="0" role="group" aria-label="Fruit"><table class="fruit-table">',
    );
    expect(markup).toContain(
      '<thead><tr><th scope="col">Name</th><th scope="col" class="num">Count</th><th scope="col">Position</th></tr></thead>',
    );
    expect(markup).toContain(
      '<tr><td><b>apple</b></td><td class="num fruit-count">3</td><td data-testid="position">1</td></tr>',
    );
    expect(markup).toContain('<td data-testid="position">2</td>');
    expect(markup).not.toContain("<caption>");
    expect(markup.indexOf('class="count"')).toBeLessThan(markup.indexOf("<table"));
    expect(markup.indexOf('class="pager"')).toBeGreaterThan(markup.indexOf("</table>"));
  });

  it("says why instead of a bare table, with nothing that goes with the table", () => {
    const markup = html([]);
    expect(markup).toBe('<p class="empty-state" data-testid="empty-state">No fruit yet.</p>');
    expect(html([], { emptyTestId: "fruit-empty" })).toContain('data-testid="fruit-empty"');
  });

  it("gives rows their class and data attributes, a caption when asked, and whole rows", () => {
    const markup = html(
      [
        { name: "apple", count: 3 },
        { name: "rotten", count: 0 },
      ],
      {
        caption: true,
        rowClassName: (f) => (f.count > 0 ? "fresh" : undefined),
        rowData: (f) => ({ fruit: f.name }),
        wholeRow: (f) =>
          f.count === 0 ? (
            <tr className="spoilt">
              <td colSpan={3}>{f.name} is spoilt</td>
            </tr>
          ) : null,
      },
    );
    expect(markup).toContain("<caption>Fruit</caption>");
    expect(markup).toContain('<tr class="fresh" data-fruit="apple"><td><b>apple</b></td>');
    expect(markup).toContain('<tr class="spoilt"><td colSpan="3">rotten is spoilt</td></tr>');
  });

  it("is the only table of the admin pages", () => {
    const dir = join(__dirname, "../src/admin");
    const drawing = readdirSync(dir)
      .filter((f) => f.endsWith(".tsx") && f !== "DataTable.tsx")
      .filter((f) => /<table[\s>]|<thead/.test(readFileSync(join(dir, f), "utf8")));
    expect(drawing).toEqual([]);
  });
});
