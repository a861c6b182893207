/** Load data for a view: re-runs when `deps` change, ignores answers to stale requests. */
import { useEffect, useState, type DependencyList } from "react";

export type Loaded<T> =
  { status: "loading" } | { status: "ready"; data: T } | { status: "error"; message: string };

export function useLoad<T>(load: () => Promise<T>, deps: DependencyList): Loaded<T> {
  const [state, setState] = useState<Loaded<T>>({ status: "loading" });
  useEffect(() => {
    let live = true;
    setState({ status: "loading" });
    load().then(
      (data) => live && setState({ status: "ready", data }),
      (err: unknown) =>
        live && setState({ status: "error", message: String((err as Error).message ?? err) }),
    );
    return () => {
      live = false;
    };
    // The caller lists what `load` depends on.
  }, deps);
  return state;
}
