"""WebSocket routes: the monitor's run and runs-list sockets, the inbox's count."""

from django.urls import URLPattern, path

from approvals.consumers import InboxConsumer
from monitor.consumers import RunConsumer, RunsConsumer

websocket_urlpatterns: list[URLPattern] = [
    path("ws/runs/<str:run_id>/", RunConsumer.as_asgi()),
    path("ws/runs/", RunsConsumer.as_asgi()),
    path("ws/inbox/", InboxConsumer.as_asgi()),
]
