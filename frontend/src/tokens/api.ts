/** The tokens page's calls to `/api/tokens/`, with the session cookie and the CSRF token. */
import { ApiError, requestJson } from "../inbox/api";
import type { ApiToken, IssuedToken, NewTokenBody, TokensConfig } from "./model";

interface Page<T> {
  count: number;
  results: T[];
}

export class TokensApi {
  constructor(private readonly config: TokensConfig) {}

  private async call<T>(path: string, init: RequestInit = {}): Promise<T | null> {
    return (await requestJson(this.config, path, init)) as T | null;
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
