"""What recording a decision on a durable run costs the database (issue 33's W4: each
statement of a decision is about a millisecond of the approver's wait), through the API as
the inbox sends it: the caller's groups are read once, eight statements under the run's
lock (the audit entry's two or three among them), and the answer reads no run again."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from approvals.models import ApprovalRequest
from tests.django.approval_helpers import INVOICE, decide, request_id, start
from tests.django.fixture_types import ClientFor, DemoUsers

pytestmark = pytest.mark.django_db


def verb_and_table(sql: str) -> tuple[str, str]:
    """Return a statement's first word and the first table it names."""
    table = re.search(r'(?:FROM|INTO|UPDATE)\s+"?(\w+)"?', sql)
    return sql.split()[0].upper(), table.group(1) if table else ""


def test_a_decision_reads_the_groups_and_the_run_once_and_appends_its_audit_entry(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    run = start(client_for("analyst"), "invoice-sign-off", INVOICE)
    approval = ApprovalRequest.objects.get(pk=request_id(run, "fin"))
    finance = client_for("finance")
    with CaptureQueriesContext(connection) as captured:
        answer = decide(finance, approval.pk, "approve")
    assert answer.status_code == 202, answer.content
    assert answer.json()["flow"] == "invoice-sign-off"  # the run it was read with
    statements = [verb_and_table(q["sql"]) for q in captured.captured_queries]
    work = [s for s in statements if s[0] not in ("SAVEPOINT", "RELEASE", "BEGIN", "COMMIT")]
    if connection.vendor == "postgresql":
        audit = [("WITH", "approvals_approvalevent")]  # the entry and the head's new hash
    else:
        audit = [("INSERT", "approvals_approvalevent"), ("UPDATE", "approvals_audithead")]
    assert work == [
        ("SELECT", "django_session"),
        ("SELECT", "auth_user"),
        ("SELECT", "auth_group"),  # the caller's groups: what they see, what they decide for
        ("SELECT", "approvals_approvalrequest"),  # the request with its run, flow, starter
        ("SELECT", "engine_run"),  # the lock, with the run's runtime and starter
        ("SELECT", "approvals_approvalrequest"),  # the request as the lock leaves it
        ("SELECT", "engine_pendingevent"),  # the votes recorded before
        ("INSERT", "engine_pendingevent"),  # the decision, in the run's inbox
        ("UPDATE", "approvals_approvalrequest"),  # decided_by
        ("UPDATE", "approvals_audithead"),  # the audit: numbers reserved, hash before
        *audit,
        ("SELECT", "approvals_approvalevent"),  # the answer's history
    ]
