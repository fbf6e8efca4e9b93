"""Braid: flows that fork, gather and pause for people."""

from braid.celery import app as celery_app

__all__ = ["celery_app"]
__version__ = "0.1.0"
