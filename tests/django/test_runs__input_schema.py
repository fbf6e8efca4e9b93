"""A run whose input does not match its flow's `input` schema is refused before it is stored."""

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command

from approvals.models import ApprovalRequest
from engine.models import Run
from tests.django.fixture_types import ClientFor, DemoUsers

DEMO = Path(__file__).resolve().parents[2] / "designer" / "demo_flows"
WRONG = {"invoice": {"id": "I-1", "amount": "300"}}
DETAIL = (
    "the input does not match the flow's input schema: "
    'invoice.amount: must be a number, not a string ("300"); invoice.vendor: required, but missing'
)
FIELDS = {
    "invoice.amount": 'must be a number, not a string ("300")',
    "invoice.vendor": "required, but missing",
}


@pytest.mark.django_db
def test_the_api_answers_400_naming_the_wrong_fields_and_stores_nothing(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    response = client_for("analyst").post(
        "/api/runs/",
        json.dumps({"flow": "invoice-sign-off", "input": WRONG}),
        content_type="application/json",
    )

    assert response.status_code == 400
    assert response.json() == {"code": "run.input", "detail": DETAIL, "fields": FIELDS}
    assert Run.objects.count() == 0
    assert ApprovalRequest.objects.count() == 0


@pytest.mark.django_db
def test_the_api_starts_a_run_whose_input_matches(demo: DemoUsers, client_for: ClientFor) -> None:
    body = {"flow": "invoice-sign-off",
            "input": {"invoice": {"id": "I-1", "amount": 300, "vendor": "Acme"}}}  # fmt: skip
    response = client_for("analyst").post(
        "/api/runs/", json.dumps(body), content_type="application/json"
    )
    assert response.status_code == 201
    assert Run.objects.count() == 1


@pytest.mark.django_db
def test_braid_run_exits_1_with_the_same_message_and_stores_nothing(demo_users: DemoUsers) -> None:
    out = io.StringIO()
    with pytest.raises(SystemExit) as exited:
        call_command(
            "braid", "run", str(DEMO / "invoice-sign-off.json"), "--input", json.dumps(WRONG),
            stdout=out,
        )  # fmt: skip

    assert exited.value.code == 1
    assert out.getvalue() == DETAIL + "\n"
    assert Run.objects.count() == 0


@pytest.mark.django_db
def test_braid_validate_reports_a_schema_that_is_not_a_valid_schema(tmp_path: Path) -> None:
    document = json.loads((DEMO / "staged-gathers.json").read_text())
    document["input"] = {"type": "objekt"}
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(document))
    out = io.StringIO()
    with pytest.raises(SystemExit) as exited:
        call_command("braid", "validate", str(path), stdout=out, stderr=out)
    assert exited.value.code == 1
    assert "input.schema_invalid" in out.getvalue()
    assert "'objekt' is not valid under any of the given schemas" in out.getvalue()
