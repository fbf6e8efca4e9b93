"""The driver's side of the workload: flows published, runs started through the API,
approvals decided through the API, and node rows sampled for regressions."""

import contextlib
import datetime as dt
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from chaos import workload
from chaos.quietly import quietly
from chaos.waits import EventWaits
from tests.processes import Browserless

TERMINAL = ("completed", "failed", "cancelled")
# Recovery of an action whose worker died takes the lease's dead time (3 s), a sweep (1 s)
# and, for a message lost before anyone claimed it, the stale time (10 s); faults that
# stop PostgreSQL or the beat's worker add a few seconds. Longer than this is a loss.
ORPHAN_LIMIT_S = 30.0


def fence_key(detail: str, attempt: int) -> tuple[str, int]:
    """A row's place in the fence's order: its comparable execution id, then its attempt."""
    return detail, attempt


class Client(Browserless):
    """A session client of the API; its login needs no built frontend (only the session)."""

    def login(self, username: str, password: str) -> None:
        request = self.login_request(username, password)
        # The page after the login may fail without a built frontend; the session cookie
        # came with the redirect to it.
        with contextlib.suppress(urllib.error.HTTPError):
            self.opener.open(request, timeout=15).close()
        assert any(c.name == "sessionid" for c in self.cookies), f"{username} could not log in"


class Traffic:
    """Runs started, approvals decided and rows watched, tick by tick."""

    def __init__(self, chaos: Any, base_url: str) -> None:
        self.chaos = chaos
        self.seed = chaos.args.seed
        self.starter = Client(base_url)
        self.approver = Client(base_url)
        self.slugs: dict[str, dict[str, Any]] = {}
        self.numbers: dict[str, int] = {}  # run id -> run number
        self.start_retries = 0
        self.decided: set[int] = set()
        self.decisions = 0
        self.decide_retries = 0
        self.rows: dict[tuple[str, str], tuple[str, int, str]] = {}
        self.regressions: list[str] = []
        self.samples = 0
        self.last_sample = 0.0
        self.orphaned_since: dict[int, float] = {}  # open action -> first seen without a lease
        self.longest_orphan_s = 0.0
        self.orphans_over_limit: set[int] = set()
        from django.conf import settings

        # The workers' sweep interval (the driver runs with their settings): an event
        # unapplied longer than it is counted by check.py unless a fault explains it.
        self.waits = EventWaits(settings.BRAID_SWEEP_INTERVAL_S)

    def publish(self) -> None:
        """Publish the child flow and the seed's flows; log in the starter and approver."""
        from django.contrib.auth.models import User

        from designer.services import import_graph

        owner = User.objects.get(username="analyst")
        import_graph(owner, workload.child_flow(), workload.CHILD_SLUG, True)
        self.slugs = workload.flows(self.seed)
        for slug, document in self.slugs.items():
            import_graph(owner, document, slug, True)
        (self.chaos.var_dir / "flows.json").write_text(__import__("json").dumps(self.slugs))
        self.starter.login(workload.STARTER, "braid-admin")
        self.approver.login(workload.APPROVER, "braid-finance")

    def launch(self, planned: list[workload.PlannedRun], started: float, every: float) -> None:
        """Start the runs at their times, deciding and sampling in between."""
        for run in planned:
            while time.monotonic() < started + run.number * every:
                self.tick(until=started + run.number * every)
            self.start(run)

    def start(self, run: workload.PlannedRun) -> None:
        """Start one run through the API; retry while the API or the database is down.

        Every try sends the run's Idempotency-Key, so a retry after an answer lost to a
        fault gets the run the first try started (200) instead of starting another.
        """
        body_sent = {"flow": run.slug, "input": run.input}
        key = {"Idempotency-Key": f"chaos-run-{run.number}"}
        for attempt in range(600):
            status, body = quietly(
                lambda: self.starter.post_json("/api/runs/", body_sent, key), (0, None)
            )
            if status in (200, 201) and isinstance(body, dict):
                self.numbers[str(body["id"])] = run.number
                return
            self.start_retries += 1
            if attempt % 20 == 0:
                self.chaos.say(
                    f"starting run {run.number} answered {status} {body!r:.200}; retrying"
                )
            self.tick(until=time.monotonic() + 0.25)
        self.chaos.say(f"run {run.number} could not be started")

    def tick(self, until: float | None = None) -> None:
        """Decide what is open and sample the rows, then sleep a little."""
        quietly(self.decide_open, None)
        if time.monotonic() - self.last_sample >= 1.0:
            quietly(self.sample, None)
            self.last_sample = time.monotonic()
        pause = 0.2 if until is None else min(0.2, until - time.monotonic())
        if pause > 0:
            time.sleep(pause)

    def decide_open(self) -> None:
        """The scripted approver: decide every open request as the seed says."""
        from approvals.models import ApprovalRequest

        open_ones = ApprovalRequest.objects.filter(status="open").exclude(pk__in=self.decided)
        for approval in open_ones.order_by("id")[:50]:
            number = self.number_of(str(approval.run_id))
            answer = workload.decision(self.seed, number, approval.node, approval.execution_id)
            status, _body = self.approver.post_json(
                f"/api/approvals/{approval.pk}/decide/",
                {"decision": answer, "execution_id": approval.execution_id},
            )
            if status in (200, 201, 202, 409):
                self.decided.add(approval.pk)
                self.decisions += status != 409
            else:
                self.decide_retries += 1

    def number_of(self, run_id: str) -> int:
        """A run's number, from its salt (also for a run whose start answer was lost)."""
        if run_id not in self.numbers:
            from engine.models import Run

            given = Run.objects.values_list("input", flat=True).get(pk=run_id)
            assert given is not None, run_id
            salt = given["salt"]
            self.numbers[run_id] = int(salt.split(".")[1])
        return self.numbers[run_id]

    def sample(self) -> None:
        """Read every node row (a row that went back in the fence's order is a regression),
        the leases of open actions and the inbox events waiting to be applied."""
        from engine.models import NodeState

        values = NodeState.objects.values_list("run_id", "node", "status", "status_detail",
                                               "attempt")  # fmt: skip
        for run_id, node, status, detail, attempt in values.iterator(chunk_size=5000):
            key = (str(run_id), node)
            now = (detail, attempt, status)
            before = self.rows.get(key)
            if before is not None and regressed(before, now):
                self.regressions.append(f"{key}: {before} -> {now}")
            self.rows[key] = now
        self.samples += 1
        self.watch_leases()
        self.waits.sample()

    def watch_leases(self) -> None:
        """Time how long each open action goes without a live claimer (unsent, unclaimed, or
        claimed by a dead or stopped worker); past ORPHAN_LIMIT_S it counts as lost."""
        from engine.models import Dispatch
        from engine.runtime import leases

        now = time.monotonic()
        open_ones = Dispatch.objects.filter(completed_at=None)
        orphans = set(open_ones.exclude(claimed_by__in=leases.alive_names())
                      .values_list("pk", flat=True))  # fmt: skip
        for pk in list(self.orphaned_since):
            if pk not in orphans:
                self.longest_orphan_s = max(
                    self.longest_orphan_s, now - self.orphaned_since.pop(pk)
                )
        for pk in orphans:
            since = self.orphaned_since.setdefault(pk, now)
            if now - since > ORPHAN_LIMIT_S:
                self.orphans_over_limit.add(pk)

    def drain(self, timeout_s: float, quiet_s: float) -> bool:
        """Keep deciding until nothing is left to do, or the timeout; return whether drained."""
        deadline = time.monotonic() + timeout_s
        quiet_since = None
        while time.monotonic() < deadline:
            self.tick()
            if quietly(busy, True):
                quiet_since = None
            elif quiet_since is None:
                quiet_since = time.monotonic()
            elif time.monotonic() - quiet_since > quiet_s:
                quietly(self.sample, None)
                return True
        return False


def regressed(before: tuple[str, int, str], now: tuple[str, int, str]) -> bool:
    """Whether a row moved back: an older execution or attempt, or out of a final status."""
    if now[:2] < before[:2]:
        return True
    return now[:2] == before[:2] and before[2] in ("completed", "failed") and now[2] != before[2]


def busy() -> bool:
    """Whether any run still has work: not finished, an event unapplied, an action open."""
    from approvals.models import ApprovalRequest
    from engine.models import Dispatch, PendingEvent, Run

    return (
        (Run.objects.exclude(status__in=TERMINAL).exists() and not only_waiting_on_time())
        or PendingEvent.objects.filter(applied_at=None).exists()
        or Dispatch.objects.filter(completed_at=None).exists()
        or ApprovalRequest.objects.filter(status="open").exists()
    )


def only_waiting_on_time() -> bool:
    """Whether every unfinished run waits on a timer further off than the drain."""
    from django.utils import timezone

    from engine.models import Run, Timer

    unfinished = Run.objects.exclude(status__in=TERMINAL)
    far = Timer.objects.filter(due_at__gt=timezone.now() + dt.timedelta(seconds=600))
    return (
        not unfinished.exclude(status="waiting").exists()
        and not unfinished.exclude(pk__in=far.values("run_id")).exists()
    )
