"""Single sign-on with OpenID Connect (docs/sso.md): off unless BRAID_OIDC_* configures it."""
