/** The API tokens page's rules, pure: what a new token's form sends, and how a token reads. */

import { relativeTime } from "../monitor/time";

/** A token as `/api/tokens/` lists it: never its secret. */
export interface ApiToken {
  id: number;
  name: string;
  prefix: string;
  user: string;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  expired: boolean;
}

/** The answer that made a token: the only one that carries its secret. */
export interface IssuedToken extends ApiToken {
  token: string;
}

/** What the page passes in its `json_script`. */
export interface TokensConfig {
  user: string;
  admin: boolean;
  csrfToken: string;
  api: string;
}

export type ExpiryChoice = "7" | "30" | "90" | "365" | "never" | "date";

export const EXPIRY_CHOICES: ReadonlyArray<{ value: ExpiryChoice; label: string }> = [
  { value: "7", label: "in 7 days" },
  { value: "30", label: "in 30 days" },
  { value: "90", label: "in 90 days" },
  { value: "365", label: "in a year" },
  { value: "date", label: "on a date…" },
  { value: "never", label: "never" },
];

export const NAME_MAX = 100;
const DAY_MS = 86_400_000;
const LONGEST_DAYS = 3650;

export interface NewTokenBody {
  name: string;
  expires_in_days?: number;
  expires_at?: string;
}

/** Return the body of a new token from the form, or the problem to show beside it. */
export function newTokenBody(
  name: string, choice: ExpiryChoice, date: string, now: number,
): { body: NewTokenBody } | { problem: string; field: "name" | "date" } {
  const trimmed = name.trim();
  if (trimmed === "") return { problem: "Give the token a name, such as “nightly export”.", field: "name" };
  if ([...trimmed].length > NAME_MAX) return { problem: `A name has at most ${NAME_MAX} characters.`, field: "name" };
  if (choice === "never") return { body: { name: trimmed } };
  if (choice !== "date") return { body: { name: trimmed, expires_in_days: Number(choice) } };
  const day = /^\d{4}-\d{2}-\d{2}$/.test(date) ? Date.parse(`${date}T00:00:00Z`) : Number.NaN;
  if (Number.isNaN(day)) return { problem: "Pick the day the token stops working.", field: "date" };
  if (day <= now) return { problem: "Pick a day after today.", field: "date" };
  if (day > now + LONGEST_DAYS * DAY_MS) return { problem: "Pick a day within ten years.", field: "date" };
  return { body: { name: trimmed, expires_at: `${date}T00:00:00Z` } };
}

/** "never", "in 29 d", or "expired 3 d ago": when a token stops working. */
export function expiryText(token: ApiToken, now: number): string {
  if (token.expires_at === null) return "never";
  const text = relativeTime(token.expires_at, now);
  return token.expired || Date.parse(token.expires_at) <= now ? `expired ${text}` : text;
}

/** "never used", or when it was last used (to the minute: the server writes it once a minute). */
export function lastUsedText(token: ApiToken, now: number): string {
  return token.last_used_at === null ? "never used" : relativeTime(token.last_used_at, now);
}

/** The list with a token just made on top, without its secret. */
export function withIssued(tokens: readonly ApiToken[], issued: IssuedToken): ApiToken[] {
  const { token: _secret, ...listed } = issued;
  return [listed, ...tokens.filter((token) => token.id !== issued.id)];
}

/** The list without a revoked token. */
export function withoutToken(tokens: readonly ApiToken[], id: number): ApiToken[] {
  return tokens.filter((token) => token.id !== id);
}

/** A first call to try the token with, for the page to show beside the secret. */
export function curlExample(origin: string, secret: string): string {
  return `curl -H "Authorization: Bearer ${secret}" ${origin}/api/runs/?limit=1`;
}

/** What revoking a token stops, in a sentence. */
export function revokeConsequence(token: ApiToken, caller: string): string {
  const whose = token.user === caller ? "your" : `${token.user}'s`;
  return `Every script using ${whose} token “${token.name}” (${token.prefix}…) is refused from now on. This cannot be undone.`;
}
