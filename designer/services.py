"""What analysts do to flows: save drafts, validate, publish, import, delete."""

from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import Max, ProtectedError
from django.utils.text import slugify

from designer.models import DraftRevision, Flow, FlowVersion, content_hash
from engine.core.validation import Report, validate


class FlowError(Exception):
    """A refused change to a flow, with a stable code and a human message."""

    code = "flow.error"

    def __init__(self, message: str, report: Report | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.report = report


class PublishRefused(FlowError):
    """Publishing refused because the draft has validation errors."""

    code = "flow.invalid"


class FlowInUse(FlowError):
    """Deleting refused because runs reference a version of the flow."""

    code = "flow.in_use"


class DraftConflict(FlowError):
    """Saving refused because the draft changed since the revision the editor started from."""

    code = "flow.draft_conflict"

    def __init__(self, message: str, flow: Flow) -> None:
        super().__init__(message)
        self.flow = flow


class SlugTaken(FlowError):
    """Creating refused because another flow has the slug."""

    code = "flow.slug_taken"


@dataclass(frozen=True)
class Published:
    """The version a publish produced, and whether it was new."""

    version: FlowVersion
    created: bool


def check_graph(document: object) -> Report:
    """Validate a graph document with the actions this deployment registers."""
    from engine.actions import ACTIONS

    return validate(document, ACTIONS.catalog())


def graph_name(document: object, fallback: str) -> str:
    """Return the document's `name` when it is a non-empty string, else the fallback."""
    name = document.get("name") if isinstance(document, dict) else None
    return name.strip() if isinstance(name, str) and name.strip() else fallback


def create_flow(owner: User, slug: str, draft: object, name: str = "") -> Flow:
    """Create a flow with its first draft; the draft may still have errors."""
    try:
        with transaction.atomic():
            return Flow.objects.create(
                slug=slug, name=name or graph_name(draft, slug), owner=owner, draft=draft
            )
    except IntegrityError as error:
        raise SlugTaken(f"a flow with the slug {slug!r} already exists") from error


@transaction.atomic
def save_draft(
    flow: Flow,
    draft: object,
    name: str = "",
    *,
    base_revision: int | None = None,
    user: User | None = None,
    keep_replaced: bool = False,
) -> Flow:
    """Replace the flow's draft (and name, when given) and count a revision.

    With `base_revision`, the save is refused (DraftConflict) unless the stored draft is
    still that revision. With `keep_replaced`, the draft being replaced is kept as a
    DraftRevision (an editor overwriting another tab's work after a conflict).
    """
    locked = Flow.objects.select_for_update().get(pk=flow.pk)
    if base_revision is not None and base_revision != locked.revision:
        raise DraftConflict(
            f"{flow.slug} was saved elsewhere (revision {locked.revision}) since revision "
            f"{base_revision} that this edit started from",
            locked,
        )
    if keep_replaced and locked.draft != draft:
        DraftRevision.objects.create(
            flow=locked, draft=locked.draft, replaced_by=user, reason="overwritten"
        )
    flow.draft = draft
    flow.name = name or graph_name(draft, flow.name)
    flow.revision = locked.revision + 1
    flow.save(update_fields=["draft", "name", "revision", "updated_at"])
    return flow


@transaction.atomic
def publish(flow: Flow, user: User) -> Published:
    """Publish the draft as the next version; an unchanged draft returns the latest one."""
    report = check_graph(flow.draft)
    if not report.ok:
        raise PublishRefused(f"{flow.slug} has {len(report.errors)} error(s)", report)
    locked = Flow.objects.select_for_update().get(pk=flow.pk)
    latest = locked.versions.order_by("-number").first()
    if latest is not None and latest.content_hash == content_hash(locked.draft):
        return Published(latest, created=False)
    number = (locked.versions.aggregate(top=Max("number"))["top"] or 0) + 1
    version = FlowVersion.objects.create(
        flow=locked, number=number, graph=locked.draft, published_by=user
    )
    return Published(version, created=True)


@transaction.atomic
def import_graph(
    owner: User,
    document: object,
    slug: str = "",
    publish_it: bool = False,
    replace: bool = True,
) -> tuple[Flow, Published | None]:
    """Create the flow of a document, or replace the draft of the flow with its slug.

    Replacing keeps the old draft as a DraftRevision; with replace=False an existing slug
    is refused (SlugTaken). With publish_it, a refused publish rolls the import back.
    """
    slug = slug or slugify(graph_name(document, ""))
    if not slug:
        raise FlowError("give a slug, or a graph whose name makes one")
    flow = Flow.objects.filter(slug=slug).first()
    if flow is None:
        flow = create_flow(owner, slug, document)
    elif not replace:
        raise SlugTaken(
            f"a flow with the slug {slug!r} exists; import with replace to make this its "
            "draft (the current draft is kept in its history), or choose another slug"
        )
    else:
        if flow.draft != document:
            DraftRevision.objects.create(
                flow=flow, draft=flow.draft, replaced_by=owner, reason="import"
            )
        flow = save_draft(flow, document)
    return flow, publish(flow, owner) if publish_it else None


def delete_flow(flow: Flow) -> None:
    """Delete a flow and its versions; refused while any run references a version."""
    try:
        with transaction.atomic():
            flow.delete()
    except ProtectedError as error:
        raise FlowInUse(f"runs reference {flow.slug}; it cannot be deleted") from error
