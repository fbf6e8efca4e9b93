"""Schemathesis over the whole API, in-process: every answer matches /api/schema/.

All checks run on every operation over Basic auth, once as each of three roles: an admin
(who may do everything), an approver in `finance` and an analyst, whose refusals (403s,
404s for what they may not see) must match the schema as well as the admin's successes
do. The allow-list below is short and deliberate; BRAID_SCHEMATHESIS_EXAMPLES raises the
example count (CI keeps it small and derandomized; the property must hold for any seed).
"""

import base64
import os
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from django.core.management import call_command
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, given, settings
from pytest_django import Settings
from schemathesis.core.errors import InvalidSchema
from schemathesis.core.result import Err, Ok
from schemathesis.schemas import APIOperation

from braid.demo import create_demo_users

# The demo logins each pass calls as (braid/demo.py).
PASSWORDS = {"admin": "braid-admin", "finance": "braid-finance", "analyst": "braid-analyst"}
CALLER = {"Authorization": ""}  # the pass's credentials, read by RoleBasicAuth
EXAMPLES = int(os.environ.get("BRAID_SCHEMATHESIS_EXAMPLES", "20"))


type Operation = APIOperation[Any, Any, Any, Any]  # schemathesis leaves its parts open


def found(result: Ok[Operation] | Err[InvalidSchema]) -> Operation:
    """Return the operation the schema describes; a schema it cannot read fails the test."""
    assert isinstance(result, Ok), result
    return result.ok()


SCHEMA = schemathesis.openapi.from_dict(SchemaGenerator().get_schema(request=None, public=True))
SCHEMA.app = get_wsgi_application()
OPERATIONS = sorted(
    f"{operation.method.upper()} {operation.path}"
    for operation in (found(result) for result in SCHEMA.get_all_operations())
    if operation.path != "/api/schema/"  # drf-spectacular's own view, not Braid's API
)


def basic(role: str) -> str:
    """Return the Authorization header of a demo login."""
    return "Basic " + base64.b64encode(f"{role}:{PASSWORDS[role]}".encode()).decode()


@SCHEMA.auth()
class RoleBasicAuth:
    """Basic auth as the pass's role, known to schemathesis so that its auth checks can
    vary it."""

    def get(self, case: Any, context: Any) -> str:
        return CALLER["Authorization"]

    def set(self, case: Any, data: str, context: Any) -> None:
        case.headers = {**(case.headers or {}), "Authorization": data}


# Operations whose 400 can answer a request the JSON Schema calls valid, because the rule
# is not expressible in it: a graph document's rules (reachability, slots, CEL ...) are
# checked by the validator; a run's flow must exist and be published, and its input must
# match the flow's own input schema; the `state` filter needs a field a flow declares; an
# execution view needs an execution the run has; a token's expiry must be in the next ten
# years, and given one way only.
SEMANTIC_400 = {
    "POST /api/flows/",
    "PUT /api/flows/{slug}/",
    "PATCH /api/flows/{slug}/",
    "POST /api/flows/import/",
    "POST /api/flows/{slug}/publish/",
    "POST /api/runs/",
    "GET /api/runs/",
    "GET /api/runs/{id}/writes/",
    "GET /api/runs/{id}/execution/",
    "POST /api/tokens/",
}


@pytest.fixture
def demo_data(db: None, settings: Settings) -> Iterator[None]:
    """Demo users and flows; no lockout, so invalid-credential checks cannot lock admin out.

    Like Django's test client, requests must not close the test's database connection
    (the WSGI handler does at each request's end; on PostgreSQL that ends the test's
    transaction).
    """
    settings.AXES_ENABLED = False
    create_demo_users()
    call_command("braid", "demo", verbosity=0)
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


def test_the_schema_lists_every_operation() -> None:
    assert len(OPERATIONS) == 38


@pytest.mark.parametrize("role", sorted(PASSWORDS))
@pytest.mark.parametrize("label", OPERATIONS)
def test_every_operation_answers_as_its_schema_says(
    demo_data: None, label: str, role: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(CALLER, "Authorization", basic(role))
    method, path = label.split(" ")
    operation = SCHEMA[path][method.lower()]
    excluded: list[Any] = []
    if label in SEMANTIC_400:
        from schemathesis.specs.openapi.checks import positive_data_acceptance

        excluded = [positive_data_acceptance]

    @given(case=operation.as_strategy())
    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
              suppress_health_check=list(HealthCheck))  # fmt: skip
    def check(case: Any) -> None:
        case.call_and_validate(excluded_checks=excluded)

    check()
