"""`braid serve`: Daphne on one address, with the embedded worker when there is no broker."""

from daphne.cli import CommandLineInterface
from django.conf import settings

from braid.worker import start_embedded_worker, stop_embedded_worker


def serve(host: str, port: int) -> None:
    """Serve Braid until Ctrl-C; start the embedded worker in embedded mode."""
    if settings.BRAID_EMBEDDED_WORKER:
        start_embedded_worker()
    print(f"Braid is serving on http://{host}:{port}/  (Ctrl-C stops it)", flush=True)
    if settings.DEBUG:
        print("DEBUG is on (DJANGO_DEBUG=1): error pages show source and settings;"
              " never expose this server.", flush=True)  # fmt: skip
    else:
        print("DEBUG is off; set DJANGO_DEBUG=1 for tracebacks in the browser.", flush=True)
    try:
        CommandLineInterface().run(["-b", host, "-p", str(port), "braid.asgi:application"])
    finally:
        stop_embedded_worker()
