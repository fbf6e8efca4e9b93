"""Flows: an editable draft graph and immutable, numbered published versions."""

import hashlib
import json

from django.conf import settings
from django.db import models


def content_hash(graph: object) -> str:
    """Return the SHA-256 of the graph's canonical JSON (sorted keys, no spaces)."""
    canonical = json.dumps(graph, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


class Flow(models.Model):
    """A flow as analysts edit it: a slug, a name and the draft graph."""

    slug = models.SlugField(max_length=100, unique=True)
    name = models.CharField(max_length=200)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="flows"
    )
    draft = models.JSONField()
    # Counts saves of the draft: an editor sends the revision it started from, and a save
    # from an older one is refused (two tabs never silently overwrite each other).
    revision = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug

    def latest_version(self) -> "FlowVersion | None":
        """Return the newest published version, or None before the first publish."""
        return self.versions.order_by("-number").first()


class ImmutableVersionError(Exception):
    """Raised when code tries to change a published version."""


class FlowVersion(models.Model):
    """One published graph of a flow: immutable, numbered 1..n, what runs reference."""

    flow = models.ForeignKey(Flow, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    graph = models.JSONField()
    content_hash = models.CharField(max_length=64)
    published_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="published_versions"
    )
    published_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["flow", "number"]
        constraints = [
            models.UniqueConstraint(fields=["flow", "number"], name="flow_version_number_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.flow_id} v{self.number}"

    def save(self, *args: object, **kwargs: object) -> None:
        if self.pk is not None:
            raise ImmutableVersionError(f"{self} is published and cannot change")
        self.content_hash = content_hash(self.graph)
        super().save(*args, **kwargs)


class DraftRevision(models.Model):
    """A draft that an import replaced: kept, so that replacing never loses work."""

    flow = models.ForeignKey(Flow, on_delete=models.CASCADE, related_name="draft_revisions")
    draft = models.JSONField()
    replaced_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True
    )
    reason = models.CharField(max_length=100)
    replaced_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["flow", "-replaced_at"]

    def __str__(self) -> str:
        return f"{self.flow.slug} draft before {self.reason} at {self.replaced_at:%Y-%m-%d %H:%M}"
