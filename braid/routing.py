"""WebSocket routes: the monitor's run and runs-list sockets, the inbox's count, and a
last route that refuses every other path (4404)."""

from django.urls import URLPattern, path, re_path

from approvals.consumers import InboxConsumer
from monitor.consumers import RunConsumer, RunsConsumer
from web.sockets import NoSuchSocket

websocket_urlpatterns: list[URLPattern] = [
    path("ws/runs/<str:run_id>/", RunConsumer.as_asgi()),
    path("ws/runs/", RunsConsumer.as_asgi()),
    path("ws/inbox/", InboxConsumer.as_asgi()),
    re_path(r"", NoSuchSocket.as_asgi()),
]
