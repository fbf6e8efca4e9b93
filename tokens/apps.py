from django.apps import AppConfig


class TokensConfig(AppConfig):
    """Personal API tokens: a script's `Authorization: Bearer` credentials (docs/tokens.md)."""

    name = "tokens"
    verbose_name = "API tokens"
