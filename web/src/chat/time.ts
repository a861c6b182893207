/** When a message was written, as a chat shows it: the time today, the date before that. */

/**
 * Parse a server timestamp. The API writes UTC; one without a zone (a naive value read back
 * from SQLite) is read as UTC too, so a reload shows the time the live answer showed.
 */
export function parseTimestamp(iso: string): Date | null {
  const zoned = /(?:Z|[+-]\d{2}:?\d{2})$/i.test(iso) ? iso : `${iso}Z`;
  const d = new Date(zoned);
  return Number.isNaN(d.getTime()) ? null : d;
}

/** A short local label for `iso` relative to `now`: "14:05", "12 Mar, 14:05" or with the year. */
export function shortTime(iso: string, now: Date): string | null {
  const d = parseTimestamp(iso);
  if (!d) return null;
  const time = d.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" });
  if (d.toDateString() === now.toDateString()) return time;
  const date = d.toLocaleDateString(undefined, {
    day: "numeric",
    month: "short",
    ...(d.getFullYear() === now.getFullYear() ? {} : { year: "numeric" }),
  });
  return `${date}, ${time}`;
}

/** The full local date and time, for the label's tooltip. */
export function fullTime(iso: string): string | null {
  const d = parseTimestamp(iso);
  return d ? d.toLocaleString(undefined, { dateStyle: "full", timeStyle: "short" }) : null;
}
