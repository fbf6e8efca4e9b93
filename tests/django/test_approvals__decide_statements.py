"""What recording a decision on a durable run costs the database: nine statements under the
run's lock, the audit entry's three included (issue 33's W4: each statement of a decision
is about a millisecond of the approver's wait)."""

import re

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext

from approvals import services
from approvals.models import ApprovalRequest
from engine.core.events import Decision
from tests.django.approval_helpers import INVOICE, request_id, start
from tests.django.fixture_types import ClientFor, DemoUsers

pytestmark = pytest.mark.django_db


def verb_and_table(sql: str) -> tuple[str, str]:
    """Return a statement's first word and the first table it names."""
    table = re.search(r'(?:FROM|INTO|UPDATE)\s+"?(\w+)"?', sql)
    return sql.split()[0].upper(), table.group(1) if table else ""


def test_a_decision_reads_the_run_once_and_appends_its_audit_entry_in_three_statements(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    run = start(client_for("analyst"), "invoice-sign-off", INVOICE)
    approval = ApprovalRequest.objects.get(pk=request_id(run, "fin"))
    finance = User.objects.get(username="finance")
    with CaptureQueriesContext(connection) as captured:
        services.decide_request(approval, finance, Decision.APPROVE)
    statements = [verb_and_table(q["sql"]) for q in captured.captured_queries]
    work = [s for s in statements if s[0] not in ("SAVEPOINT", "RELEASE", "BEGIN", "COMMIT")]
    assert work == [
        ("SELECT", "engine_run"),  # the lock, with the run's runtime and starter
        ("SELECT", "approvals_approvalrequest"),  # the request as the lock leaves it
        ("SELECT", "auth_group"),  # the decider's groups
        ("SELECT", "engine_pendingevent"),  # the votes recorded before
        ("INSERT", "engine_pendingevent"),  # the decision, in the run's inbox
        ("UPDATE", "approvals_approvalrequest"),  # decided_by
        ("UPDATE", "approvals_audithead"),  # the audit: numbers reserved, hash before
        ("INSERT", "approvals_approvalevent"),
        ("UPDATE", "approvals_audithead"),  # the new head hash
    ]
