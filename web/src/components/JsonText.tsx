/** Metadata shown as text (never as markup or links), for admin tables. */
import type { ReactNode } from "react";

export function JsonText(props: { value: unknown }): ReactNode {
  if (props.value === null || props.value === undefined) return <span className="muted">—</span>;
  if (typeof props.value === "object" && Object.keys(props.value).length === 0) {
    return <span className="muted">{"{}"}</span>;
  }
  return <code className="json">{JSON.stringify(props.value, null, 1)}</code>;
}
