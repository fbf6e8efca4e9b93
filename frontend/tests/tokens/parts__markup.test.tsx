import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import type { IssuedToken } from "../../src/tokens/model";
import { SecretBox, TokenTable } from "../../src/tokens/parts";
import { token } from "./tokens";

const NOW = Date.parse("2026-12-06T12:00:00Z");
const HOSTILE = '<img src=x onerror="alert(1)">';

describe("the token list", () => {
  it("shows name, prefix, created, expiry and last use, people's text as text", () => {
    const html = renderToStaticMarkup(
      <TokenTable tokens={[token({ name: HOSTILE, expires_at: "2026-12-09T12:00:00Z", last_used_at: "2026-12-06T11:59:00Z" })]}
        now={NOW} showUser={false} onRevoke={() => undefined} />,
    );
    expect(html).not.toContain("<img");
    expect(html).toContain("&lt;img src=x");
    expect(html).toContain("<code>braid_Ab3dE9fQ…</code>");
    expect(html).toContain("5 d ago");
    expect(html).toContain('title="2026-12-09 12:00:00 UTC">in 3 d</time>');
    expect(html).toContain("1 min ago");
    expect(html).toContain('aria-label="Revoke token &lt;img');
    expect(html).not.toContain("<th scope=\"col\">User</th>");
  });

  it("shows whose each token is when listing everyone's, and marks expired ones", () => {
    const html = renderToStaticMarkup(
      <TokenTable tokens={[token({ user: "finance", expires_at: "2026-12-01T13:00:00Z", expired: true })]}
        now={NOW} showUser onRevoke={() => undefined} />,
    );
    expect(html).toContain('<th scope="col">User</th>');
    expect(html).toContain("<td>finance</td>");
    expect(html).toContain('class="tokens__row--expired"');
    expect(html).toContain("expired 4 d ago");
  });

  it("says so when there is none", () => {
    const html = renderToStaticMarkup(<TokenTable tokens={[]} now={NOW} showUser={false} onRevoke={() => undefined} />);
    expect(html).toBe('<p class="notice">No tokens yet. Make one above for a script.</p>');
  });
});

describe("the secret, shown once", () => {
  it("warns that it is shown only now, and offers a copy button and a first call", () => {
    const issued: IssuedToken = { ...token(), token: "braid_Ab3dE9fQxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" };
    const html = renderToStaticMarkup(<SecretBox issued={issued} origin="http://127.0.0.1:8000" onDone={() => undefined} />);
    expect(html).toContain("Copy it now: it is shown only this once.");
    expect(html).toMatch(new RegExp(`<input [^>]*readOnly="" [^>]*value="${issued.token}"/>`));
    expect(html).toContain(">Copy</button>");
    expect(html).toContain(`curl -H &quot;Authorization: Bearer ${issued.token}&quot; http://127.0.0.1:8000/api/runs/?limit=1`);
  });
});
