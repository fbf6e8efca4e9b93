/** The API tokens page: make a token (its secret shown once), list them, revoke one. */

import { useCallback, useEffect, useMemo, useState } from "react";
import { useNow } from "../monitor/ui";
import { TokensApi } from "./api";
import { type ApiToken, type IssuedToken, type NewTokenBody, type TokensConfig, withIssued, withoutToken } from "./model";
import { CreateForm, RevokeDialog, SecretBox, TokenTable } from "./parts";

type Listing = { state: "loading" } | { state: "failed"; text: string } | { state: "ready"; tokens: ApiToken[]; count: number };

export function TokensPage({ config }: { config: TokensConfig }) {
  const api = useMemo(() => new TokensApi(config), [config]);
  const now = useNow(30_000);
  const [everyone, setEveryone] = useState(false);
  const [listing, setListing] = useState<Listing>({ state: "loading" });
  const [issued, setIssued] = useState<IssuedToken | null>(null);
  const [revoking, setRevoking] = useState<ApiToken | null>(null);
  const [notice, setNotice] = useState("");

  const load = useCallback(async (all: boolean) => {
    setListing({ state: "loading" });
    try {
      setListing({ state: "ready", ...(await api.list(all)) });
    } catch (error) {
      setListing({ state: "failed", text: error instanceof Error ? error.message : String(error) });
    }
  }, [api]);
  useEffect(() => { void load(everyone); }, [load, everyone]);

  async function create(body: NewTokenBody): Promise<string | null> {
    try {
      const made = await api.create(body);
      setIssued(made);
      setNotice("");
      setListing((old) => old.state === "ready" ? { ...old, tokens: withIssued(old.tokens, made), count: old.count + 1 } : old);
      return null;
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
  }

  async function revoke(token: ApiToken): Promise<string | null> {
    try {
      await api.revoke(token.id);
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
    setListing((old) => old.state === "ready" ? { ...old, tokens: withoutToken(old.tokens, token.id), count: old.count - 1 } : old);
    if (issued?.id === token.id) setIssued(null);
    setNotice(`Token “${token.name}” revoked.`);
    return null;
  }

  return (
    <div className="tokens">
      {issued === null ? (
        <CreateForm onCreate={create} />
      ) : (
        <SecretBox issued={issued} origin={window.location.origin} onDone={() => setIssued(null)} />
      )}
      <div className="tokens__heading">
        <h2>{everyone ? "Everyone's tokens" : "Your tokens"}</h2>
        {config.admin && (
          <label className="check">
            <input type="checkbox" checked={everyone} onChange={(event) => setEveryone(event.target.checked)} />
            Show everyone&apos;s
          </label>
        )}
      </div>
      <p role="status" className="muted">{notice}</p>
      {listing.state === "loading" && <p className="notice">Loading tokens…</p>}
      {listing.state === "failed" && (
        <p className="error" role="alert">
          The tokens could not be loaded: {listing.text} <button type="button" onClick={() => void load(everyone)}>Try again</button>
        </p>
      )}
      {listing.state === "ready" && (
        <>
          <TokenTable tokens={listing.tokens} now={now} showUser={everyone} onRevoke={setRevoking} />
          {listing.count > listing.tokens.length && (
            <p className="muted">Showing the newest {listing.tokens.length} of {listing.count}; the Django admin lists them all.</p>
          )}
        </>
      )}
      <RevokeDialog token={revoking} caller={config.user} onClose={() => setRevoking(null)} onConfirm={revoke} />
    </div>
  );
}
