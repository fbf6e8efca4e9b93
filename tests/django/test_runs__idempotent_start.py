"""POST /api/runs/ with an Idempotency-Key: a retried start answers the run it started."""

import json
from typing import TypedDict

import pytest
from django.contrib.auth.models import User
from django.test import Client
from rest_framework.response import Response

from engine.models import PendingEvent, Run
from runs import api
from tests.django.fixture_types import ClientFor, DemoUsers, TestResponse

pytestmark = pytest.mark.django_db

URGENT = {"flow": "b-and-d-or-e", "input": {"urgent": True}}


class KeyHeader(TypedDict, total=False):
    """The WSGI header of an Idempotency-Key, as the test client's keyword argument."""

    HTTP_IDEMPOTENCY_KEY: str


def post(client: Client, body: object, key: str | None = None) -> TestResponse:
    """POST a start, with the Idempotency-Key header when one is given."""
    headers: KeyHeader = {} if key is None else {"HTTP_IDEMPOTENCY_KEY": key}
    return client.post("/api/runs/", json.dumps(body), content_type="application/json", **headers)


def test_a_retried_start_answers_the_run_it_started(demo: DemoUsers, client_for: ClientFor) -> None:
    client = client_for("analyst")
    first = post(client, URGENT, "order-7731")
    again = post(client, URGENT, "order-7731")
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json() == first.json()
    assert (first.get("Idempotent-Replayed"), again["Idempotent-Replayed"]) == (None, "true")
    assert Run.objects.count() == 1
    assert PendingEvent.objects.filter(run_id=first.json()["id"]).count() == 1


def test_the_key_with_another_request_is_a_422_and_stores_nothing(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    client = client_for("analyst")
    run_id = post(client, URGENT, "order-7731").json()["id"]
    other = post(client, {"flow": "b-and-d-or-e", "input": {"urgent": False}}, "order-7731")
    assert (other.status_code, other.json()) == (
        422,
        {
            "code": "run.idempotency_conflict",
            "detail": f"this Idempotency-Key started run {run_id} with a different request; "
            "send a new key to start another run",
        },
    )
    assert Run.objects.count() == 1


def test_keys_are_per_user_and_starts_without_one_are_not_merged(
    demo: DemoUsers, client_for: ClientFor
) -> None:
    analyst, admin = client_for("analyst"), client_for("admin")
    assert post(analyst, URGENT, "k-1").status_code == 201
    assert post(admin, URGENT, "k-1").status_code == 201
    assert post(analyst, URGENT, "k-2").status_code == 201
    assert [post(analyst, URGENT).status_code for _ in range(2)] == [201, 201]
    assert Run.objects.count() == 5


@pytest.mark.parametrize("key", ["", "a b", "ключ", "x" * 256])
def test_a_malformed_key_is_a_400_and_stores_nothing(
    demo: DemoUsers, client_for: ClientFor, key: str
) -> None:
    response = post(client_for("analyst"), URGENT, key)
    assert (response.status_code, response.json()) == (
        400,
        {
            "code": "run.idempotency_key",
            "detail": "an Idempotency-Key is 1 to 255 visible ASCII characters",
        },
    )
    assert Run.objects.count() == 0


def test_a_key_stored_meanwhile_answers_its_run(
    demo: DemoUsers, client_for: ClientFor, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two requests with one key at once: the second finds no run, then loses the insert to
    the unique constraint, and answers the first's run."""
    client = client_for("analyst")
    run_id = post(client, URGENT, "order-7731").json()["id"]
    looks: list[str] = []
    original = api.replayed

    def late(user: User, key: str, digest: str) -> Response | None:
        looks.append(key)
        return None if len(looks) == 1 else original(user, key, digest)

    monkeypatch.setattr(api, "replayed", late)
    again = post(client, URGENT, "order-7731")
    assert (again.status_code, again.json()["id"], looks) == (200, run_id, ["order-7731"] * 2)
    assert Run.objects.count() == 1
