/** Load data for a view: re-runs when `deps` change, ignores answers to stale requests. */
import { useEffect, useState, type DependencyList } from "react";

export type Loaded<T> =
  { status: "loading" } | { status: "ready"; data: T } | { status: "error"; message: string };

const LOADING = { status: "loading" } as const;

function sameDeps(a: DependencyList, b: DependencyList): boolean {
  return a.length === b.length && a.every((v, i) => Object.is(v, b[i]));
}

/**
 * The result of `load()` for the current `deps`; "loading" until the answer to these deps
 * arrives (an answer to earlier deps is never shown). Call sites are checked by the
 * `react-hooks/exhaustive-deps` lint rule (`additionalHooks`), like `useEffect`.
 */
export function useLoad<T>(load: () => Promise<T>, deps: DependencyList): Loaded<T> {
  const [result, setResult] = useState<{ deps: DependencyList; state: Loaded<T> } | null>(null);
  useEffect(() => {
    let live = true;
    load().then(
      (data) => {
        if (live) setResult({ deps, state: { status: "ready", data } });
      },
      (err: unknown) => {
        if (live) setResult({ deps, state: { status: "error", message: messageOf(err) } });
      },
    );
    return () => {
      live = false;
    };
    // The caller lists what `load` depends on (checked at each call site).
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, deps);
  return result && sameDeps(result.deps, deps) ? result.state : LOADING;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
