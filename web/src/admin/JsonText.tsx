/**
 * A JSON value (card metadata, stored columns) shown as text, never as markup or links, in a
 * box that scrolls when the value is long and can then be reached and scrolled by keyboard.
 */
import type { ReactNode } from "react";

import { ScrollBox } from "./ScrollBox";

export function JsonText(props: { value: unknown; label: string }): ReactNode {
  if (props.value === null || props.value === undefined) return <span className="muted">—</span>;
  if (typeof props.value === "object" && Object.keys(props.value).length === 0) {
    return <span className="muted">{"{}"}</span>;
  }
  return (
    <ScrollBox className="json" label={props.label}>
      <code>{JSON.stringify(props.value, null, 1)}</code>
    </ScrollBox>
  );
}
