"""ASGI entry point: HTTP through Django's WSGI handler in a pool of threads (braid.http),
WebSockets through Channels."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "braid.settings")
get_asgi_application()  # sets Django up, as Channels asks, before anything else is imported

from django.conf import settings  # noqa: E402
from django.core.wsgi import get_wsgi_application  # noqa: E402

from braid.http import PooledWsgi  # noqa: E402

django_application = PooledWsgi(get_wsgi_application(), settings.BRAID_HTTP_THREADS)

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
