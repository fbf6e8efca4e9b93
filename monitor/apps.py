from django.apps import AppConfig


class MonitorConfig(AppConfig):
    """Live run trees and their colors."""

    name = "monitor"
