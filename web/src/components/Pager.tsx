/**
 * Previous / next paging over an offset; `total` may be unknown (null) for open-ended lists.
 * Renders nothing when there is nothing to page through.
 */
import type { ReactNode } from "react";

export function Pager(props: {
  offset: number;
  pageSize: number;
  total: number | null;
  /** When the total is unknown: how many rows the current page returned. */
  shown?: number;
  onChange: (offset: number) => void;
}): ReactNode {
  const { offset, pageSize, total } = props;
  // Nothing at all to page through: the page says so in words, not "0 of 0".
  if (offset === 0 && (total === 0 || (total === null && (props.shown ?? 0) === 0))) return null;
  const hasNext = total !== null ? offset + pageSize < total : (props.shown ?? 0) >= pageSize;
  const last = total !== null ? Math.min(total, offset + pageSize) : offset + (props.shown ?? 0);
  return (
    <nav className="pager" aria-label="Pages">
      <button
        type="button"
        disabled={offset === 0}
        onClick={() => props.onChange(Math.max(0, offset - pageSize))}
      >
        Previous
      </button>
      <span>
        {last === 0 ? "0" : `${offset + 1}–${last}`}
        {total !== null ? ` of ${total}` : ""}
      </span>
      <button type="button" disabled={!hasNext} onClick={() => props.onChange(offset + pageSize)}>
        Next
      </button>
    </nav>
  );
}
