from django.apps import AppConfig


class BraidConfig(AppConfig):
    """The project itself, installed for its command line (`manage.py braid`)."""

    name = "braid"
