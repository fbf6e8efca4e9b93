"""Approval requests: what the engine asks of people, stored with the step that asked.

A row opens when a step emits `RequestApproval` and closes when one emits `CloseApproval`
(decided, or its frame was cancelled). Decisions themselves go through the run's inbox;
these rows are what the approvers' inbox lists.
"""

from typing import Any, NoReturn

from django.conf import settings
from django.db import NotSupportedError, models
from django.db.models import Lookup


class ApprovalStatus(models.TextChoices):
    """Whether people can still decide a request."""

    OPEN = "open", "Open"
    CLOSED = "closed", "Closed"


class GroupsField(models.JSONField):
    """A JSON list of group names, with an `overlaps` lookup (any name in common)."""


@GroupsField.register_lookup
class Overlaps(Lookup):
    """`groups__overlaps=["finance", "legal"]`: the list holds at least one of the names."""

    lookup_name = "overlaps"
    prepare_rhs = False

    def as_sql(self, compiler: Any, connection: Any) -> NoReturn:
        raise NotSupportedError("groups__overlaps runs on SQLite and PostgreSQL only")

    def as_sqlite(self, compiler: Any, connection: Any) -> tuple[str, list[Any]]:
        lhs, params = self.process_lhs(compiler, connection)
        names = [str(name) for name in self.rhs]
        if not names:
            return "1 = 0", []
        marks = ", ".join(["%s"] * len(names))
        sql = f"EXISTS (SELECT 1 FROM json_each({lhs}) AS element WHERE element.value IN ({marks}))"
        return sql, [*params, *names]

    def as_postgresql(self, compiler: Any, connection: Any) -> tuple[str, list[Any]]:
        lhs, params = self.process_lhs(compiler, connection)
        return f"{lhs} ?| %s::text[]", [*params, [str(name) for name in self.rhs]]


class ApprovalRequest(models.Model):
    """One approval a run waits on, at one node path and execution."""

    run = models.ForeignKey("engine.Run", on_delete=models.CASCADE, related_name="approvals")
    key = models.CharField(max_length=2000, help_text="the scheduler's wait key")
    node = models.CharField(max_length=1000, help_text="the node path")
    execution_id = models.CharField(max_length=2000)
    groups = GroupsField(default=list, help_text="who may decide: any member of these groups")
    policy = models.JSONField(help_text='"all", "any" or {"quorum": n}')
    title = models.TextField()
    instructions = models.TextField(blank=True, default="")
    status = models.CharField(
        max_length=16, choices=ApprovalStatus.choices, default=ApprovalStatus.OPEN
    )
    outcome = models.TextField(
        blank=True, default="", help_text="approved, rejected, or why it was closed"
    )
    shown = models.JSONField(
        default=list, blank=True, help_text="[{field, value}]: what the node shows approvers"
    )
    due_at = models.DateTimeField(null=True, blank=True, help_text="overdue after this time")
    allow_starter = models.BooleanField(
        default=False, help_text="whether the run's starter may decide (segregation of duties)"
    )
    assignee = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
        related_name="assigned_approvals",
        help_text="set by delegation or reassignment: then only this person decides",
    )  # fmt: skip
    delegations = models.JSONField(
        default=list, blank=True, help_text='[{"from", "to", "groups"}]: parts passed on'
    )
    delegated_from = GroupsField(default=list, blank=True, help_text="who delegated a part")
    delegated_to = GroupsField(default=list, blank=True, help_text="who received a part")
    decided_by = GroupsField(
        default=list, blank=True, help_text="who has recorded a decision (out of their inbox)"
    )
    # Copied from the run when the request is stored (a run's starter never changes): the
    # inbox asks "did this user start the request's run?" of every open request it reads,
    # a column here where a look into the runs table cost 2-3 µs a request, and a set of
    # the user's runs, past work_mem, a read of them all per request.
    starter = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
        related_name="+", help_text="who started the run (segregation of duties)",
    )  # fmt: skip
    created_at = models.DateTimeField(auto_now_add=True)
    closed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            # The inbox: open requests, newest first, then filtered by group. Open
            # requests are few (people decide them); closed ones pile up and stay out.
            models.Index(
                fields=["-created_at", "-id"],
                condition=models.Q(status="open"),
                name="approval_open_newest",
            ),
            # The archive: closed requests, most recently closed first. At 300,000 of them
            # its page read 258 ms sorting them all.
            models.Index(
                fields=["-closed_at", "-id"],
                condition=models.Q(status="closed"),
                name="approval_closed_newest",
            ),
        ]
        # The key's unique index, without the pattern-matching copy `unique=True` adds on
        # PostgreSQL, which no query uses and every request written wrote.
        constraints = [models.UniqueConstraint(fields=["key"], name="approval_key_unique")]

    def __str__(self) -> str:
        return f"{self.title} ({self.node}, {self.status})"


class EventKind(models.TextChoices):
    """What happened to a request, as the audit records it."""

    REQUESTED = "requested", "Requested"
    VIEWED = "viewed", "Viewed"
    DECIDED = "decided", "Decided"
    DELEGATED = "delegated", "Delegated"
    REASSIGNED = "reassigned", "Reassigned"
    CLOSED = "closed", "Closed"
    CANCELLED = "cancelled", "Cancelled"
    EXPIRED = "expired", "Expired"
    REOPENED = "reopened", "Reopened"
    RETURNED = "returned", "Returned"


class AuditImmutable(Exception):
    """The application tried to change or remove an audit entry."""


class AppendOnlyQuerySet(models.QuerySet["ApprovalEvent"]):
    """Audit entries are inserted, never updated or deleted through the ORM."""

    def update(self, **kwargs: Any) -> int:
        raise AuditImmutable("approval events are append-only: update refused")

    def delete(self) -> tuple[int, dict[str, int]]:
        raise AuditImmutable("approval events are append-only: delete refused")


class ApprovalEvent(models.Model):
    """One entry of the approval audit: append-only and chained by sha256 (approvals/audit.py).

    Plain columns instead of foreign keys, so that deleting a run or a user never deletes
    or changes an entry.
    """

    seq = models.PositiveBigIntegerField(unique=True, help_text="1, 2, 3 ... with no gaps")
    at = models.DateTimeField()
    kind = models.CharField(max_length=16, choices=EventKind.choices)
    request_id = models.BigIntegerField(db_index=True)
    run_id = models.UUIDField()
    node = models.CharField(max_length=1000)
    execution_id = models.CharField(max_length=2000)
    actor = models.CharField(max_length=150, blank=True, default="", help_text="'' = the engine")
    detail = models.JSONField(default=dict)
    prev_hash = models.CharField(max_length=64)
    hash = models.CharField(max_length=64)

    objects = AppendOnlyQuerySet.as_manager()

    class Meta:
        ordering = ["seq"]

    def __str__(self) -> str:
        return f"#{self.seq} {self.kind} request {self.request_id} by {self.actor or 'engine'}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise AuditImmutable(f"approval event #{self.seq} is append-only: save refused")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise AuditImmutable(f"approval event #{self.seq} is append-only: delete refused")


class AuditHead(models.Model):
    """The chain's head: the last entry's number and hash (one row, locked by each append)."""

    seq = models.PositiveBigIntegerField(default=0)
    hash = models.CharField(max_length=64, default="")

    def __str__(self) -> str:
        return f"audit head #{self.seq}"


class NotificationSettings(models.Model):
    """A person's choice about approval emails (no row: the defaults)."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="approval_notifications"
    )
    email_requests = models.BooleanField(
        default=True,
        help_text="email me when a request is assigned to me or one of my groups",
    )

    def __str__(self) -> str:
        return f"notifications of user {self.user_id}: email {self.email_requests}"


class NoticeReason(models.TextChoices):
    """Why a person was told about a request."""

    REQUESTED = "requested", "Requested of their group"
    DELEGATED = "delegated", "Delegated to them"
    REASSIGNED = "reassigned", "Reassigned to them"


class Notice(models.Model):
    """One email about one request to one person for one reason: the key that keeps a late
    or repeated delivery from sending it twice (approvals/notify.py)."""

    request = models.ForeignKey(ApprovalRequest, on_delete=models.CASCADE, related_name="notices")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    reason = models.CharField(max_length=16, choices=NoticeReason.choices)
    claim = models.UUIDField(help_text="the delivery that inserted the row: it alone sends")
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True, default="", help_text="why sending failed (logged too)")

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["request", "user", "reason"], name="notice_once_per_request_person_reason"
            )
        ]

    def __str__(self) -> str:
        return f"{self.reason} notice of request {self.request_id} to user {self.user_id}"
