/**
 * The admin pages' table: a header row of column names, one row per item, in a box that
 * scrolls on a narrow screen; with no item, one sentence saying why instead (`EmptyState`).
 * What goes with the table (a count above it, a pager below) is shown only with the table.
 */
import { Fragment, type ReactNode } from "react";

import { EmptyState } from "./EmptyState";
import { ScrollBox } from "./ScrollBox";

/** One column: its header and what each row shows in it. */
export interface Column<T> {
  header: ReactNode;
  cell: (row: T, index: number) => ReactNode;
  /** A column of figures: its header and cells are right-aligned (`num`). */
  numeric?: boolean;
  /** More classes on each of its cells. */
  className?: string;
  /** A test id on each of its cells. */
  testId?: string;
}

export interface DataTableProps<T> {
  /** Names the scrolling box for assistive technology (and the caption, when shown). */
  label: string;
  /** The table's class (its styles). */
  className: string;
  columns: readonly Column<T>[];
  rows: readonly T[];
  rowKey: (row: T, index: number) => string;
  /** What is said instead of the table when there is no row. */
  empty: ReactNode;
  emptyTestId?: string;
  /** Shows `label` as the table's caption. */
  caption?: boolean;
  rowClassName?: (row: T) => string | undefined;
  /** `data-*` attributes of a row (`{card: id}` becomes `data-card`). */
  rowData?: (row: T) => Record<string, string>;
  /** A row drawn whole, its `<tr>` included, instead of its cells (a placeholder spanning the
   * columns); null for the ordinary cells. */
  wholeRow?: (row: T, index: number) => ReactNode;
  /** Above the table, only with it (a count, a summary). */
  header?: ReactNode;
  /** Below the table, only with it (a pager). */
  footer?: ReactNode;
}

function cellClass(column: Column<unknown>): string | undefined {
  const classes = [column.numeric ? "num" : "", column.className ?? ""].filter(Boolean);
  return classes.length > 0 ? classes.join(" ") : undefined;
}

function dataAttributes(data: Record<string, string> | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(data ?? {}).map(([k, v]) => [`data-${k}`, v]));
}

export function DataTable<T>(props: DataTableProps<T>): ReactNode {
  if (props.rows.length === 0) {
    return <EmptyState testId={props.emptyTestId}>{props.empty}</EmptyState>;
  }
  const columns = props.columns as readonly Column<unknown>[];
  return (
    <>
      {props.header}
      <ScrollBox label={props.label}>
        <table className={props.className}>
          {props.caption && <caption>{props.label}</caption>}
          <thead>
            <tr>
              {columns.map((c, i) => (
                <th key={i} scope="col" className={c.numeric ? "num" : undefined}>
                  {c.header}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {props.rows.map((row, i) => {
              const key = props.rowKey(row, i);
              const whole = props.wholeRow?.(row, i);
              if (whole !== undefined && whole !== null)
                return <Fragment key={key}>{whole}</Fragment>;
              return (
                <tr
                  key={key}
                  className={props.rowClassName?.(row)}
                  {...dataAttributes(props.rowData?.(row))}
                >
                  {columns.map((c, j) => (
                    <td key={j} className={cellClass(c)} data-testid={c.testId}>
                      {c.cell(row, i)}
                    </td>
                  ))}
                </tr>
              );
            })}
          </tbody>
        </table>
      </ScrollBox>
      {props.footer}
    </>
  );
}
