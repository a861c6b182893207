/** A look-back window ending now, and the select every admin report filters with. */
import type { ReactNode } from "react";

export type Lookback = "all" | "day" | "week" | "month";

const WINDOW_MS: Record<Exclude<Lookback, "all">, number> = {
  day: 86_400_000,
  week: 7 * 86_400_000,
  month: 30 * 86_400_000,
};

export const LOOKBACKS: { value: Lookback; label: string }[] = [
  { value: "all", label: "All time" },
  { value: "day", label: "Last 24 hours" },
  { value: "week", label: "Last 7 days" },
  { value: "month", label: "Last 30 days" },
];

/** The `since` bound for a look-back window ending now (ISO 8601, UTC). */
export function sinceFor(window: Lookback, now: Date = new Date()): string | undefined {
  return window === "all" ? undefined : new Date(now.getTime() - WINDOW_MS[window]).toISOString();
}

/** A labelled select of `LOOKBACKS`. */
export function LookbackSelect(props: {
  id: string;
  label: string;
  value: Lookback;
  onChange: (value: Lookback) => void;
}): ReactNode {
  return (
    <>
      <label htmlFor={props.id}>{props.label}</label>
      <select
        id={props.id}
        value={props.value}
        onChange={(e) => props.onChange(e.target.value as Lookback)}
      >
        {LOOKBACKS.map((w) => (
          <option key={w.value} value={w.value}>
            {w.label}
          </option>
        ))}
      </select>
    </>
  );
}
