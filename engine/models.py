"""Runs, their node rows and their trace, as the engine persists them."""

import uuid

from django.conf import settings
from django.db import models

from engine.core.events import RowStatus as CoreRowStatus
from engine.core.events import RunStatus as CoreRunStatus


class RunStatus(models.TextChoices):
    """Mirrors engine.core.events.RunStatus."""

    RUNNING = CoreRunStatus.RUNNING.value, "Running"
    WAITING = CoreRunStatus.WAITING.value, "Waiting"
    COMPLETED = CoreRunStatus.COMPLETED.value, "Completed"
    FAILED = CoreRunStatus.FAILED.value, "Failed"
    CANCELLED = CoreRunStatus.CANCELLED.value, "Cancelled"


class RowStatus(models.TextChoices):
    """Mirrors engine.core.events.RowStatus: the only statuses a node row is written with."""

    RUNNING = CoreRowStatus.RUNNING.value, "Running"
    WAITING = CoreRowStatus.WAITING.value, "Waiting"
    COMPLETED = CoreRowStatus.COMPLETED.value, "Completed"
    FAILED = CoreRowStatus.FAILED.value, "Failed"


class Runtime(models.TextChoices):
    """Which runtime drives a run: `braid run` in one process, or workers over the database."""

    IN_PROCESS = "in_process", "In process"
    DURABLE = "durable", "Durable"


class Run(models.Model):
    """One execution of a flow version (or of a graph file run from the command line)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    flow_version = models.ForeignKey(
        "designer.FlowVersion", on_delete=models.PROTECT, null=True, blank=True, related_name="runs"
    )
    label = models.CharField(max_length=300)
    graphs = models.JSONField(help_text="every graph this run executes, by key (main, slug@n)")
    graphs_digest = models.CharField(
        max_length=64, blank=True, default="",
        help_text="sha256 of `graphs`: runs that share it share one decoding per worker",
    )  # fmt: skip
    input = models.JSONField(null=True, blank=True)
    status = models.CharField(max_length=16, choices=RunStatus.choices)
    error = models.TextField(blank=True, default="")
    snapshot = models.JSONField(default=dict)
    state = models.JSONField(default=dict, help_text="the run's state as it stands, for search")
    redrive = models.JSONField(
        null=True,
        blank=True,
        help_text="a failed action's key and the snapshot from just before it",
    )
    trace_length = models.PositiveIntegerField(default=0)
    snapshot_version = models.PositiveBigIntegerField(
        default=0, help_text="commits of the snapshot so far: a cached state is current if equal"
    )
    step_attempts = models.PositiveIntegerField(
        default=0,
        help_text="steps begun since the last committed one (engine.runtime.attempts.begin_step)",
    )
    runtime = models.CharField(max_length=16, choices=Runtime.choices, default=Runtime.IN_PROCESS)
    started_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True
    )
    idempotency_key = models.CharField(
        max_length=255, blank=True, default="",
        help_text="the Idempotency-Key its start came with: one key, one run",
    )  # fmt: skip
    idempotency_digest = models.CharField(
        max_length=64, blank=True, default="",
        help_text="sha256 of the start request the key came with (runs.api.start_digest)",
    )  # fmt: skip
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["started_by", "idempotency_key"],
                condition=~models.Q(idempotency_key=""),
                name="run_idempotency_key",
            )
        ]
        # Status: not `db_index=True`, which adds a pattern-matching copy on PostgreSQL that
        # no query uses and every change of status writes. Created: the runs list reads its
        # page newest first (at 300,000 runs its page read 110 ms sorting them all, 1 ms
        # through the index).
        indexes = [models.Index(fields=["status"], name="run_status"),
                   models.Index(fields=["created_at"], name="run_created")]  # fmt: skip

    def __str__(self) -> str:
        return f"{self.label} ({self.id})"


class NodeState(models.Model):
    """A node row (CONTRACT §3): written only by the fenced upsert (engine/runtime/fence.py)."""

    # The unique (run, node) index serves lookups by run; a second index on run alone
    # would only cost every inserted row.
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="node_rows", db_index=False)
    node = models.CharField(max_length=1000)
    status = models.CharField(max_length=16, choices=RowStatus.choices)
    status_detail = models.CharField(max_length=2000, help_text="the comparable execution id")
    execution_id = models.CharField(max_length=2000)
    result = models.JSONField(null=True, blank=True)
    attempt = models.PositiveIntegerField(default=1)
    updated_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "node"], name="node_row_unique")]

    def __str__(self) -> str:
        return f"{self.node}: {self.status}"


class RunPart(models.Model):
    """One part of a run's state (engine.core.parts): a frame, lineage, write, token, wait.

    Run.snapshot holds the head; a step upserts the parts it changed and deletes the parts
    that are gone. The value is JSON text: it is only ever read back whole, by the engine.
    """

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="parts", db_index=False)
    key = models.CharField(max_length=2000)
    value = models.TextField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "key"], name="run_part_unique")]

    def __str__(self) -> str:
        return self.key


class PartChange(models.Model):
    """The keys of the parts one step put or dropped, under the version its commit made.

    A worker whose cached state of a run is some versions old reads the parts these rows
    name instead of every part (engine.core.parts.catch_up). Only a step's own commit
    writes one, so a version without its row (a retry, a whole snapshot) sends the worker
    to a full load; a run keeps the rows of its last CHANGES_KEPT versions.
    """

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="part_changes",
                            db_index=False)  # fmt: skip
    version = models.PositiveBigIntegerField()
    keys = models.TextField(help_text="a JSON array of the part keys put or dropped")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "version"], name="part_change_unique")
        ]

    def __str__(self) -> str:
        return f"{self.run_id}@{self.version}"


class TraceEvent(models.Model):
    """One append-only trace event of a run."""

    # The unique (run, seq) index serves lookups by run; a second one on run alone was
    # written at every trace event, the table's most frequent insert.
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="trace_events",
                            db_index=False)  # fmt: skip
    seq = models.PositiveIntegerField()
    event = models.CharField(max_length=64)
    execution_id = models.CharField(max_length=2000)
    node = models.CharField(max_length=1000, blank=True, default="")
    at = models.CharField(max_length=40)
    detail = models.JSONField(default=dict)

    class Meta:
        ordering = ["run", "seq"]
        constraints = [models.UniqueConstraint(fields=["run", "seq"], name="trace_seq_unique")]
        # /metrics counts run failures at every scrape (braid.db_metrics): an index of those
        # events alone, a few rows where the table has millions, and nothing to write for
        # any other trace event.
        indexes = [models.Index(fields=["run"], condition=models.Q(event="run.failed"),
                                name="trace_run_failed")]  # fmt: skip

    def __str__(self) -> str:
        return f"{self.seq} {self.event}"


class PendingEvent(models.Model):
    """A run's inbox: an event recorded once per key, applied by advance_run in id order.

    The unique key makes recording idempotent: a redelivered action result or a second
    click on "approve" inserts nothing.
    """

    # The unique (run, key) index serves lookups by run, and the partial one the look for
    # unapplied events (the sweeper's and the metrics' too): each index more is written at
    # every event recorded and again at every event applied.
    run = models.ForeignKey(
        Run, on_delete=models.CASCADE, related_name="pending_events", db_index=False
    )
    key = models.CharField(max_length=2000)
    event = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)
    applied_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "key"], name="event_key_unique")]
        # Every step looks for a run's unapplied events. An index on `applied_at` alone
        # keeps an entry for each event ever recorded, applied or not, until a vacuum, all
        # under the key NULL: looking through it grew with every event of every run.
        indexes = [models.Index(fields=["run"], condition=models.Q(applied_at__isnull=True),
                                name="event_unapplied")]  # fmt: skip

    def __str__(self) -> str:
        return f"{self.run_id} {self.key}"


class Dispatch(models.Model):
    """The outbox of actions: written with the step that asked for them, published after."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="dispatches")
    key = models.CharField(max_length=2000)
    command = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)
    published_at = models.DateTimeField(null=True, blank=True)
    claimed_by = models.CharField(
        max_length=300, blank=True, default="", help_text="the worker process running it"
    )
    claimed_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        # The key's unique index, without the pattern-matching copy `unique=True` adds on
        # PostgreSQL, which no query used. The open dispatches (the sweeper's, the
        # metrics') are found through an index of them alone: one on `completed_at`
        # kept an entry per dispatch ever written, and took two writes per dispatch.
        constraints = [models.UniqueConstraint(fields=["key"], name="dispatch_key_unique")]
        indexes = [models.Index(fields=["created_at"], condition=models.Q(completed_at=None),
                                name="dispatch_open")]  # fmt: skip

    def __str__(self) -> str:
        return self.key


class WorkerLease(models.Model):
    """A worker process that runs actions, and when it last said it was alive.

    The sweeper re-sends an action claimed by a process that stopped beating (killed, or
    stopped) at once, instead of waiting for a time-out as long as the slowest action.
    """

    name = models.CharField(max_length=300, primary_key=True, help_text="host:pid")
    beat_at = models.DateTimeField(db_index=True)
    worker = models.CharField(
        max_length=300, blank=True, default="", help_text="the Celery worker it belongs to"
    )
    slots = models.PositiveIntegerField(
        default=1, help_text="how many tasks that worker runs at once (its concurrency)"
    )

    def __str__(self) -> str:
        return f"{self.name} at {self.beat_at}"


class Timer(models.Model):
    """A durable timer: the sweeper turns a due one into a TimerFired event."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="timers")
    key = models.CharField(max_length=2000, unique=True)
    due_at = models.DateTimeField(db_index=True)

    def __str__(self) -> str:
        return f"{self.key} at {self.due_at}"
