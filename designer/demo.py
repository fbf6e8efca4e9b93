"""The demo flows `braid demo` loads: each valid, each exercising something real.

`make run` runs `braid demo` at every start, so loading creates only the demo flows that are
missing: a demo flow someone has edited (or merely opened and saved) is theirs, and is left
as it is. `refresh=True` (`braid demo --refresh`) replaces them with this Braid's files
instead, keeping each replaced draft in the flow's history.
"""

from dataclasses import dataclass, field
from pathlib import Path

from django.contrib.auth import get_user_model
from django.db import transaction

from designer import services
from designer.models import Flow
from web.documents import load_document

DEMO_DIR = Path(__file__).resolve().parent / "demo_flows"
REFRESH_HINT = (
    "  `.venv/bin/python manage.py braid demo --refresh` replaces them with this Braid's own;"
    " the drafts it replaces stay in each flow's history"
)


@dataclass
class DemoFlows:
    """What one load did: the flows it created or refreshed, and the ones it left alone."""

    refresh: bool
    loaded: list[services.Published] = field(default_factory=list)
    kept: list[Flow] = field(default_factory=list)

    def report(self) -> list[str]:
        """Return the lines telling what was loaded and what was kept, and how to refresh."""
        lines = []
        if self.loaded:
            listed = ", ".join(version_label(published) for published in self.loaded)
            verb = "Refreshed" if self.refresh else "Created"
            lines.append(f"{verb} {demo_flows(len(self.loaded))}: {listed}")
        if self.kept:
            slugs = ", ".join(flow.slug for flow in self.kept)
            lines.append(
                f"Kept {demo_flows(len(self.kept))} you already have, as they are: {slugs}"
            )
            lines.append(REFRESH_HINT)
        return lines


def version_label(published: services.Published) -> str:
    """Return `slug (vN)`, saying when a refresh found the version already current."""
    version = published.version
    current = "" if published.created else ", already current"
    return f"{version.flow.slug} (v{version.number}{current})"


def demo_flows(count: int) -> str:
    """Return '1 demo flow' or 'N demo flows'."""
    return f"{count} demo flow{'' if count == 1 else 's'}"


def demo_slugs() -> list[str]:
    """Return the demo flows' slugs, in file-name order."""
    return [path.stem for path in sorted(DEMO_DIR.glob("*.json"))]


def demo_documents() -> list[tuple[str, object]]:
    """Return (slug, document) for each demo flow file, in file-name order."""
    return [
        (slug, load_document((DEMO_DIR / f"{slug}.json").read_bytes())) for slug in demo_slugs()
    ]


@transaction.atomic
def load_demo_flows(username: str = "analyst", refresh: bool = False) -> DemoFlows:
    """Import and publish each missing demo flow; keep the ones that exist unless refreshing.

    A refreshed flow whose draft already equals the file keeps its latest version.
    """
    owner = get_user_model().objects.get(username=username)
    existing = {flow.slug: flow for flow in Flow.objects.filter(slug__in=demo_slugs())}
    result = DemoFlows(refresh)
    for slug, document in demo_documents():
        if slug in existing and not refresh:
            result.kept.append(existing[slug])
            continue
        _, published = services.import_graph(owner, document, slug, publish_it=True)
        assert published is not None
        result.loaded.append(published)
    return result
