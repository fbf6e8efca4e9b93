/** A token as `/api/tokens/` lists it, for the tokens page's tests. */
import type { ApiToken } from "../../src/tokens/model";

export function token(over: Partial<ApiToken> = {}): ApiToken {
  return {
    id: 3, name: "nightly export", prefix: "braid_Ab3dE9fQ", user: "analyst", created_at: "2026-12-01T12:00:00Z",
    expires_at: null, last_used_at: null, expired: false, ...over,
  };
}
