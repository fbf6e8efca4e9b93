/** The tokens page's calls to `/api/tokens/`, with the session cookie and the CSRF token. */
import { ApiError, errorText } from "../inbox/api";
import type { ApiToken, IssuedToken, NewTokenBody, TokensConfig } from "./model";

interface Page<T> {
  count: number;
  results: T[];
}

export class TokensApi {
  constructor(private readonly config: TokensConfig) {}

  private async call<T>(path: string, init: RequestInit = {}): Promise<T | null> {
    const headers: Record<string, string> = { Accept: "application/json" };
    if (init.method !== undefined) {
      headers["Content-Type"] = "application/json";
      headers["X-CSRFToken"] = this.config.csrfToken;
    }
    let response: Response;
    try {
      response = await fetch(`${this.config.api}${path}`, { credentials: "same-origin", ...init, headers });
    } catch {
      throw new ApiError("The server cannot be reached; check your connection and try again.", 0, "network");
    }
    if (response.status === 204) return null;
    const body: unknown = await response.json().catch(() => null);
    if (!response.ok) {
      const { code, text } = errorText(body, response.status);
      throw new ApiError(text, response.status, code);
    }
    return body as T;
  }

  /** The caller's tokens, or everyone's (admins): the first 500, and how many there are. */
  async list(everyone: boolean): Promise<{ tokens: ApiToken[]; count: number }> {
    const page = await this.call<Page<ApiToken>>(`?limit=500${everyone ? "&all=true" : ""}`);
    return { tokens: page?.results ?? [], count: page?.count ?? 0 };
  }

  async create(body: NewTokenBody): Promise<IssuedToken> {
    const issued = await this.call<IssuedToken>("", { method: "POST", body: JSON.stringify(body) });
    if (issued === null) throw new ApiError("The server made no token; try again.", 204, "empty");
    return issued;
  }

  async revoke(id: number): Promise<void> {
    await this.call(`${id}/`, { method: "DELETE" });
  }
}
