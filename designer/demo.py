"""The demo flows `braid demo` loads: each valid, each exercising something real."""

from pathlib import Path

from django.contrib.auth import get_user_model
from django.db import transaction

from designer import services
from designer.models import Flow, FlowVersion
from web.documents import load_document

DEMO_DIR = Path(__file__).resolve().parent / "demo_flows"


def demo_documents() -> list[tuple[str, object]]:
    """Return (slug, document) for each demo flow file, in file-name order."""
    return [
        (path.stem, load_document(path.read_bytes())) for path in sorted(DEMO_DIR.glob("*.json"))
    ]


@transaction.atomic
def load_demo_flows(username: str = "analyst") -> list[tuple[Flow, FlowVersion]]:
    """Import and publish every demo flow; an unchanged flow keeps its latest version."""
    owner = get_user_model().objects.get(username=username)
    loaded = []
    for slug, document in demo_documents():
        flow, published = services.import_graph(owner, document, slug, publish_it=True)
        assert published is not None
        loaded.append((flow, published.version))
    return loaded
