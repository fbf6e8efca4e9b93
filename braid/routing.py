"""WebSocket routes: the monitor's run and runs-list sockets, the inbox's count, and a
last route that refuses every other path (4404)."""

from channels.routing import URLRouter
from django.urls import URLPattern, path, re_path

from approvals.consumers import InboxConsumer
from monitor.consumers import RunConsumer, RunsConsumer
from web.sockets import NoSuchSocket

websocket_urlpatterns: list[URLPattern] = [
    path("ws/runs/<str:run_id>/", RunConsumer.as_asgi()),  # type: ignore[arg-type]  # django-stubs: a view, not an ASGI app
    path("ws/runs/", RunsConsumer.as_asgi()),  # type: ignore[arg-type]  # django-stubs: a view, not an ASGI app
    path("ws/inbox/", InboxConsumer.as_asgi()),  # type: ignore[arg-type]  # django-stubs: a view, not an ASGI app
    re_path(r"", NoSuchSocket.as_asgi()),  # type: ignore[arg-type]  # django-stubs: a view, not an ASGI app
]
# The router the ASGI application and the tests serve the routes through.
websocket_router = URLRouter(websocket_urlpatterns)  # type: ignore[arg-type]  # types-channels: patterns with an ASGI callback, which path() is not typed to return
