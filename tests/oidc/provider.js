// A real OpenID Connect provider for Braid's single sign-on tests: panva's oidc-provider
// (OpenID Certified), with one confidential client and the accounts of a JSON file.
//
//   node tests/oidc/provider.js   with OIDC_PORT, OIDC_CLIENT_ID, OIDC_CLIENT_SECRET,
//                                 OIDC_REDIRECT_URI, OIDC_POST_LOGOUT_REDIRECT_URI and
//                                 OIDC_ACCOUNTS (a file path) set
//
// OIDC_ACCOUNTS holds {"<login>": {"email": ..., "preferred_username": ..., "groups": [...]}}.
// It is read again at every login, so a test changes a person's groups between two logins
// by rewriting it. The login form is the provider's own development form (devInteractions):
// it accepts any password, which is the identity provider's business, not Braid's.
import { readFileSync } from 'node:fs';
import { generateKeyPairSync, randomBytes } from 'node:crypto';

import Provider from 'oidc-provider';

function required(name) {
  const value = process.env[name];
  if (!value) {
    console.error(`${name} is required`);
    process.exit(2);
  }
  return value;
}

const port = Number(required('OIDC_PORT'));
const accountsFile = required('OIDC_ACCOUNTS');
const issuer = `http://127.0.0.1:${port}`;

// A signing key made for this process: nothing to keep, nothing written in the source.
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const signingKey = { ...privateKey.export({ format: 'jwk' }), kid: 'braid-test', alg: 'RS256', use: 'sig' };

async function findAccount(ctx, sub) {
  const accounts = JSON.parse(readFileSync(accountsFile, 'utf8'));
  const account = accounts[sub];
  if (!account) {
    return undefined;
  }
  return {
    accountId: sub,
    async claims() {
      return { sub, ...account };
    },
  };
}

const provider = new Provider(issuer, {
  clients: [{
    client_id: required('OIDC_CLIENT_ID'),
    client_secret: required('OIDC_CLIENT_SECRET'),
    redirect_uris: [required('OIDC_REDIRECT_URI')],
    post_logout_redirect_uris: [required('OIDC_POST_LOGOUT_REDIRECT_URI')],
    response_types: ['code'],
    grant_types: ['authorization_code'],
    token_endpoint_auth_method: 'client_secret_basic',
  }],
  jwks: { keys: [signingKey] },
  cookies: { keys: [randomBytes(32).toString('hex')] },
  findAccount,
  scopes: ['openid', 'email', 'profile', 'groups'],
  claims: {
    openid: ['sub'],
    email: ['email', 'email_verified'],
    profile: ['preferred_username', 'name', 'given_name', 'family_name'],
    groups: ['groups'],
  },
  pkce: { required: () => true },
  features: { devInteractions: { enabled: true } },
});

provider.listen(port, '127.0.0.1', () => {
  console.log(`oidc-provider listening on ${issuer}`);
});
