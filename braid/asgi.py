"""ASGI entry point: HTTP through Django, WebSockets through Channels."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "braid.settings")
django_application = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402  (needs Django set up first)
from channels.routing import ProtocolTypeRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from braid.routing import websocket_router  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": django_application,
        "websocket": AllowedHostsOriginValidator(AuthMiddlewareStack(websocket_router)),
    }
)
