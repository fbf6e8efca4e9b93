"""WebSocket routes; the monitor adds /ws/runs/<id>/ when it lands."""

from django.urls import URLPattern

websocket_urlpatterns: list[URLPattern] = []
