"""`/metrics`: Prometheus's view of Braid, for the scraper configured to read it.

Unless BRAID_METRICS_TOKEN or BRAID_METRICS_OPEN is set the page does not exist (404): the
figures say how busy each flow and each approvers' group is, which is nobody's business by
default. With the token set, the scraper sends `Authorization: Bearer <token>`, compared in
constant time; with BRAID_METRICS_OPEN=1 alone anyone may read it (a network the operator
closes some other way). docs/operations.md describes every metric.

One scrape holds what the database says (braid.db_metrics) and what processes counted
(engine.metrics, web.sockets): this process's own, or, with PROMETHEUS_MULTIPROC_DIR set,
those of every process of this host that writes to that directory.
"""

import hmac
import os
from collections.abc import Iterable

from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.http import Http404, HttpRequest, HttpResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from prometheus_client import REGISTRY, CollectorRegistry, Metric
from prometheus_client.exposition import choose_encoder
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector

from braid.db_metrics import DatabaseCollector
from web.api_errors import error

MULTIPROCESS_DIR = "PROMETHEUS_MULTIPROC_DIR"


class ThisProcess(Collector):
    """Everything on prometheus_client's default registry of this process: Braid's
    instruments, and the process, platform and garbage-collector figures."""

    def collect(self) -> Iterable[Metric]:
        return REGISTRY.collect()


def scrape_registry(multiprocess_dir: str | None) -> CollectorRegistry:
    """Return a registry of what one scrape reports: the database's figures, and either
    this process's instruments or those of every process writing to `multiprocess_dir`."""
    registry = CollectorRegistry(auto_describe=False)
    if multiprocess_dir:
        MultiProcessCollector(registry, path=multiprocess_dir)
    else:
        registry.register(ThisProcess())
    registry.register(DatabaseCollector())
    return registry


def authorized(request: HttpRequest, token: str) -> bool:
    """Whether the request carries `Authorization: Bearer <token>` (constant-time compare)."""
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(
        given.strip().encode(), token.encode()
    )


@login_not_required
@never_cache
@require_GET
def metrics(request: HttpRequest) -> HttpResponse:
    """Serve the exposition to a configured scraper; 404 when metrics are off."""
    token: str = settings.BRAID_METRICS_TOKEN
    if not token and not settings.BRAID_METRICS_OPEN:
        raise Http404("metrics are off (BRAID_METRICS_TOKEN)")
    if token and not authorized(request, token):
        refused = error("not_authenticated", "send Authorization: Bearer <BRAID_METRICS_TOKEN>",
                        401)  # fmt: skip
        refused["WWW-Authenticate"] = 'Bearer realm="braid-metrics"'
        return refused
    registry = scrape_registry(os.environ.get(MULTIPROCESS_DIR))
    encode, content_type = choose_encoder(request.headers.get("Accept", ""))
    return HttpResponse(encode(registry), content_type=content_type)
