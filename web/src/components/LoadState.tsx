/** Renders the loading and error states of a `useLoad` result, or its content. */
import type { ReactNode } from "react";

import type { Loaded } from "./useLoad";

export function LoadState<T>(props: {
  state: Loaded<T>;
  what: string;
  children: (data: T) => ReactNode;
}): ReactNode {
  const { state } = props;
  if (state.status === "loading") return <p role="status">Loading {props.what}…</p>;
  if (state.status === "error") {
    return (
      <p className="error" role="alert">
        Could not load {props.what}: {state.message}
      </p>
    );
  }
  return props.children(state.data);
}
