"""WebSocket routes; the monitor adds /ws/runs/<id>/ when it lands."""

from django.urls import URLPattern, path

from approvals.consumers import InboxConsumer

websocket_urlpatterns: list[URLPattern] = [
    path("ws/inbox/", InboxConsumer.as_asgi()),
]
