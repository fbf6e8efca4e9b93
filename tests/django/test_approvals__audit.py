"""The approval audit: what is recorded, that the app cannot change it, and the hash chain."""

import io
from uuid import UUID

import pytest
from django.core.management import call_command
from django.db import connection

from approvals import audit
from approvals.models import ApprovalEvent, AuditImmutable
from tests.django.approval_helpers import INVOICE, decide, post, request_id, start
from tests.django.durable_driver import drain
from tests.django.fixture_types import ClientFor, DemoUsers

pytestmark = pytest.mark.django_db


def kinds(run_id: UUID | str) -> list[tuple[str, str, str]]:
    """Return the run's audit entries as (kind, node, actor), in chain order."""
    return [(e.kind, e.node, e.actor) for e in ApprovalEvent.objects.filter(run_id=run_id)]


def verify_output() -> tuple[int, str]:
    """Run `braid audit verify`; return its exit status and output."""
    out = io.StringIO()
    try:
        call_command("braid", "audit", "verify", stdout=out)
    except SystemExit as exit_status:
        return int(exit_status.code or 0), out.getvalue()
    return 0, out.getvalue()


def test_requests_views_decisions_closing_and_cancelling_are_audited_in_order(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    finance, legal = client_for("finance"), client_for("legal")
    run = start(client_for("analyst"), "invoice-sign-off", INVOICE)
    fin = request_id(run, "fin")
    assert finance.get(f"/api/approvals/{fin}/").status_code == 200
    assert finance.get(f"/api/approvals/{fin}/").status_code == 200  # a second look: no entry
    assert decide(finance, fin, "approve", "fine").status_code == 202
    drain(run)
    assert (
        post(client_for("admin"), f"/api/runs/{run.pk}/cancel/", {"reason": "x"}).status_code == 202
    )
    drain(run)
    assert decide(legal, request_id(run, "leg"), "approve").status_code == 409
    assert kinds(run.pk) == [
        ("requested", "fin", ""),
        ("requested", "leg", ""),
        ("viewed", "fin", "finance"),
        ("decided", "fin", "finance"),
        ("closed", "fin", ""),
        ("cancelled", "leg", ""),
    ]
    decided = ApprovalEvent.objects.get(run_id=run.pk, kind="decided")
    assert decided.detail == {
        "decision": "approve",
        "comment": "fine",
        "starter": False,
        "groups": ["finance"],
    }
    cancelled = ApprovalEvent.objects.get(run_id=run.pk, kind="cancelled")
    assert cancelled.detail == {"reason": "run cancelled by admin"}
    assert verify_output() == (0, "audit chain verified: 6 entries\n")


def test_the_application_can_neither_update_nor_delete_an_entry(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    start(client_for("analyst"), "invoice-sign-off", INVOICE)
    entry = ApprovalEvent.objects.first()
    assert entry is not None
    entry.actor = "mallory"
    with pytest.raises(AuditImmutable):
        entry.save()
    with pytest.raises(AuditImmutable):
        entry.delete()
    with pytest.raises(AuditImmutable):
        ApprovalEvent.objects.filter(pk=entry.pk).update(actor="mallory")
    with pytest.raises(AuditImmutable):
        ApprovalEvent.objects.all().delete()
    assert ApprovalEvent.objects.filter(actor="mallory").count() == 0
    assert audit.verify().ok


def test_editing_one_stored_entry_by_sql_breaks_the_chain_at_that_entry(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    analyst = client_for("analyst")
    for _ in range(3):
        run = start(analyst, "invoice-sign-off", INVOICE)
        assert decide(client_for("finance"), request_id(run, "fin"), "approve").status_code == 202
        drain(run)
    entries = list(ApprovalEvent.objects.order_by("seq"))
    assert len(entries) == 12 and audit.verify().entries == 12
    target = entries[6]
    table = ApprovalEvent._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {table} SET actor = %s WHERE id = %s", ["someone-else", target.pk])
    status, output = verify_output()
    assert status == 1
    assert output == (
        f"audit chain broken at entry #{target.seq} (id {target.pk}): its content does not "
        "match its hash (the entry was changed); the 6 entries before it verify\n"
    )


def test_removing_the_last_entry_by_sql_is_noticed(demo: DemoUsers, client_for: ClientFor) -> None:
    start(client_for("analyst"), "invoice-sign-off", INVOICE)
    last = ApprovalEvent.objects.order_by("seq").last()
    assert last is not None
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {ApprovalEvent._meta.db_table} WHERE id = %s", [last.pk])
    verdict = audit.verify()
    assert (verdict.ok, verdict.entries, verdict.broken_seq) == (False, 1, 2)


def test_an_overdue_request_is_audited_as_expired_once(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    import datetime as dt

    from django.utils import timezone

    from approvals.models import ApprovalRequest
    from approvals.services import record_expired

    run = start(client_for("analyst"), "invoice-sign-off", INVOICE)
    ApprovalRequest.objects.filter(run=run, node="fin").update(
        due_at=timezone.now() - dt.timedelta(seconds=1)
    )
    assert record_expired() == 1
    assert record_expired() == 0
    assert [k for k, _, _ in kinds(run.pk)].count("expired") == 1


def test_an_append_writes_the_head_once_then_its_entries_and_the_heads_hash(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    """After the first ever append (which makes the head): the head's write that reserves
    the numbers and answers the hash before, then the entries and the new hash, which
    PostgreSQL takes as one statement (the insert in a WITH) and SQLite as two. The
    verified chain covers every stored column an entry's hash is taken over."""
    from django.test.utils import CaptureQueriesContext

    from approvals.models import ApprovalRequest, AuditHead, EventKind

    run = start(client_for("analyst"), "invoice-sign-off", INVOICE)
    request = ApprovalRequest.objects.get(pk=request_id(run, "fin"))
    before = AuditHead.objects.get(pk=1)
    with CaptureQueriesContext(connection) as captured:
        audit.append([audit.Entry(EventKind.VIEWED, request, "finance"),
                      audit.Entry(EventKind.VIEWED, request, "legal")])  # fmt: skip
    statements = [q["sql"].split()[0].upper() for q in captured.captured_queries]
    if connection.vendor == "postgresql":
        assert statements == ["UPDATE", "WITH"]
    else:
        assert statements == ["UPDATE", "INSERT", "UPDATE"]
    head = AuditHead.objects.get(pk=1)
    last = ApprovalEvent.objects.order_by("-seq").first()
    assert last is not None
    stored = ApprovalEvent.objects.filter(seq__gt=before.seq).order_by("seq")
    assert [(e.kind, e.actor, e.request_id, e.run_id, e.node, e.detail) for e in stored] == [
        ("viewed", "finance", request.pk, request.run_id, "fin", {}),
        ("viewed", "legal", request.pk, request.run_id, "fin", {}),
    ]
    assert (head.seq, head.hash) == (before.seq + 2, last.hash)
    assert verify_output() == (0, f"audit chain verified: {head.seq} entries\n")


def test_the_first_entry_ever_makes_the_head() -> None:
    from django.contrib.auth.models import User

    from approvals.models import ApprovalRequest, AuditHead, EventKind
    from engine.models import Run

    AuditHead.objects.all().delete()
    user = User.objects.create(username="starter")
    run = Run.objects.create(label="x", graphs={}, started_by=user)
    request = ApprovalRequest.objects.create(
        run=run, key="k", node="ask", groups=["finance"], policy="any"
    )
    [entry] = audit.append([audit.Entry(EventKind.VIEWED, request, "finance")])
    assert (entry.seq, entry.prev_hash) == (1, audit.GENESIS)
    head = AuditHead.objects.get(pk=1)
    assert (head.seq, head.hash) == (1, entry.hash)


def test_closing_requests_answers_the_rows_it_closed_one_statement_per_reason() -> None:
    """A step's close: one UPDATE ... RETURNING per reason, no read before it; a request
    closed already is left as it is and not audited again; the entries go in id order."""
    from django.contrib.auth.models import User
    from django.test.utils import CaptureQueriesContext

    from approvals.hooks import ApprovalsObserver
    from approvals.models import ApprovalRequest, ApprovalStatus
    from engine.models import Run

    user = User.objects.create(username="starter")
    run = Run.objects.create(label="x", graphs={}, started_by=user)
    other = Run.objects.create(label="y", graphs={}, started_by=user)
    made = {key: ApprovalRequest.objects.create(run=run, key=key, node=key, execution_id=f"e-{key}",
                                                groups=["finance"], policy="any")
            for key in ("a", "b", "c", "d")}  # fmt: skip
    ApprovalRequest.objects.filter(key="c").update(status=ApprovalStatus.CLOSED, outcome="rejected")
    ApprovalRequest.objects.create(run=other, key="x", node="x", groups=["finance"], policy="any")
    reasons = {"d": "approved", "a": "cancelled", "b": "approved", "c": "approved",
               "x": "approved"}  # fmt: skip
    with CaptureQueriesContext(connection) as captured:
        ApprovalsObserver().approvals_closed(str(run.pk), reasons)
    closes = [q["sql"] for q in captured.captured_queries if "approvalrequest" in q["sql"]]
    assert len(closes) == 2 and all("RETURNING" in sql for sql in closes)  # one per reason
    assert not [q for q in captured.captured_queries if q["sql"].startswith("SELECT")]
    found = {r.key: (r.status, r.outcome, r.closed_at is not None)
             for r in ApprovalRequest.objects.all()}  # fmt: skip
    assert found == {
        "a": ("closed", "cancelled", True),
        "b": ("closed", "approved", True),
        "c": ("closed", "rejected", False),
        "d": ("closed", "approved", True),
        "x": ("open", "", False),
    }
    entries = ApprovalEvent.objects.filter(run_id=run.pk).order_by("seq")
    assert [(e.request_id, e.kind, e.detail) for e in entries] == [
        (made["a"].pk, "cancelled", {"reason": "cancelled"}),
        (made["b"].pk, "closed", {"outcome": "approved"}),
        (made["d"].pk, "closed", {"outcome": "approved"}),
    ]
    assert audit.verify().ok


def test_an_append_past_the_statement_limit_inserts_in_parts_then_sets_the_hash(
    demo: DemoUsers, client_for: ClientFor, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each entry is 11 parameters: a long append goes as several inserts, so it stays
    under every database's limit; the chain still verifies, and the head is its end."""
    from django.test.utils import CaptureQueriesContext

    from approvals.models import ApprovalRequest, AuditHead, EventKind

    monkeypatch.setattr(audit, "ENTRIES_PER_STATEMENT", 2)
    run = start(client_for("analyst"), "invoice-sign-off", INVOICE)
    request = ApprovalRequest.objects.get(pk=request_id(run, "fin"))
    before = AuditHead.objects.get(pk=1)
    with CaptureQueriesContext(connection) as captured:
        audit.append([audit.Entry(EventKind.VIEWED, request, f"person{n}") for n in range(5)])
    statements = [q["sql"].split()[0].upper() for q in captured.captured_queries]
    assert statements == ["UPDATE", "INSERT", "INSERT", "INSERT", "UPDATE"]
    stored = ApprovalEvent.objects.filter(seq__gt=before.seq).order_by("seq")
    assert [(e.seq, e.actor) for e in stored] == [
        (before.seq + n + 1, f"person{n}") for n in range(5)
    ]
    head = AuditHead.objects.get(pk=1)
    assert (head.seq, head.hash) == (before.seq + 5, list(stored)[-1].hash)
    assert audit.verify().ok
