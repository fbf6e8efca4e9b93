"""WebSocket routes: the monitor's run and runs-list sockets."""

from django.urls import path

from monitor.consumers import RunConsumer, RunsConsumer

websocket_urlpatterns = [
    path("ws/runs/<str:run_id>/", RunConsumer.as_asgi()),
    path("ws/runs/", RunsConsumer.as_asgi()),
]
