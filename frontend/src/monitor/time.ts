/** Relative times ("3 min ago") with the absolute time for a tooltip. Pure: `now` is passed in. */

const UNITS: ReadonlyArray<[number, string]> = [
  [60, "s"],
  [60, "min"],
  [24, "h"],
  [30, "d"],
  [12, "mo"],
  [Number.POSITIVE_INFINITY, "y"],
];

/** Return `iso` relative to `now`: "just now", "42 s ago", "3 min ago", "in 2 h", "5 d ago". */
export function relativeTime(iso: string, now: number): string {
  const then = Date.parse(iso);
  if (Number.isNaN(then)) {
    return "unknown time";
  }
  const seconds = Math.round((now - then) / 1000);
  const future = seconds < 0;
  let amount = Math.abs(seconds);
  if (amount < 5) {
    return "just now";
  }
  for (const [size, unit] of UNITS) {
    if (amount < size) {
      return future ? `in ${amount} ${unit}` : `${amount} ${unit} ago`;
    }
    amount = Math.floor(amount / size);
  }
  return iso;
}

/** Return the absolute time for a tooltip: ISO date and time in UTC, e.g. "2026-12-04 05:07:19 UTC". */
export function absoluteTime(iso: string): string {
  const then = Date.parse(iso);
  if (Number.isNaN(then)) {
    return iso;
  }
  return `${new Date(then).toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

/** Return a duration in milliseconds as short text: "0.4 s", "12 s", "3 min 4 s", "2 h 5 min". */
export function durationText(ms: number): string {
  if (ms < 10_000) {
    return `${(Math.max(ms, 0) / 1000).toFixed(1)} s`;
  }
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${seconds % 60} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}
