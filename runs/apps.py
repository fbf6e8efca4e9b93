from django.apps import AppConfig


class RunsConfig(AppConfig):
    """Starting, listing, cancelling and deciding runs; the designer's test runs."""

    name = "runs"
