"""Reading /metrics in tests: scrape through Django's test client and parse the exposition
with prometheus_client's own parser."""

from django.test import Client
from prometheus_client.parser import text_string_to_metric_families

TOKEN = "metrics-token-for-tests-0123456789"

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def parse(text: str) -> Samples:
    """Return every sample of an exposition by name and labels."""
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def scrape(token: str = TOKEN) -> Samples:
    """GET /metrics with the bearer token; return its samples."""
    response = Client().get("/metrics", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain; version=0.0.4")
    return parse(response.content.decode())


def value(samples: Samples, name: str, **labels: str) -> float:
    """Return one sample's value; raise KeyError when it is not reported."""
    return samples[(name, frozenset(labels.items()))]


def grown(before: Samples, after: Samples, name: str, **labels: str) -> float:
    """Return how much a process counter grew between two scrapes (a labelled child that
    no code of this process had made yet counts from 0, as Prometheus reads it); raise
    KeyError when the later scrape does not report it."""
    key = (name, frozenset(labels.items()))
    return after[key] - before.get(key, 0.0)
