"""Notifications (docs/approvals.md, "Notifications"): a new request emails the people who
may decide it once, after commit, with an absolute link and the inbox's words; delegation
and reassignment email the new decider; people can turn it off; a failing mail server
loses nothing."""

import logging
from collections.abc import Callable
from typing import Protocol

import pytest
from django.contrib.auth.models import Group, User
from django.core import mail
from django.test import Client
from pytest_django import DjangoCaptureOnCommitCallbacks, Settings

from approvals import hooks, notify
from approvals.models import ApprovalRequest, Notice, NotificationSettings
from tests.django.approval_helpers import approval_graph, post, publish, request_id, start
from tests.django.durable_driver import drain
from tests.django.fixture_types import ClientFor, DemoUsers

pytestmark = pytest.mark.django_db


def member(name: str, *groups: str, email: str = "") -> User:
    """Create a user in these groups with an address."""
    user = User.objects.create_user(name, email=email or f"{name}@braid.example")
    for group in groups:
        user.groups.add(Group.objects.get_or_create(name=group)[0])
    return user


class AfterCommit(Protocol):
    """Runs work, then what it left for after commit; returns what the work returned."""

    def __call__[T](self, work: Callable[[], T]) -> T: ...


@pytest.fixture
def committed(django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks) -> AfterCommit:
    """Run what would run after commit (the test's transaction never commits)."""

    def run[T](work: Callable[[], T]) -> T:
        with django_capture_on_commit_callbacks(execute=True):
            return work()

    return run


@pytest.fixture
def flow(demo: DemoUsers, client_for: ClientFor) -> str:
    """A published flow whose one approval waits on finance (`any`), showing nothing."""
    member("controller", "finance")
    publish(client_for("analyst"), "one-ask", approval_graph(title="Pay ${string(state.total)}"))
    return "one-ask"


def sent_to() -> list[list[str]]:
    """Return the addresses of each email sent so far."""
    return [message.to for message in mail.outbox]


def test_a_new_request_emails_each_member_of_its_group_once_with_a_link_and_its_context(
    flow: str, client_for: ClientFor, committed: AfterCommit, settings: Settings
) -> None:
    settings.BRAID_BASE_URL = "https://braid.example.org/"
    run = committed(lambda: start(client_for("analyst"), flow, {"amount": 120, "ref": "x" * 90}))
    pk = request_id(run, "ask")
    assert sorted(sent_to()) == [["controller@braid.example"], ["finance@braid.example"]]
    message = mail.outbox[0]
    assert message.subject == "[Braid] Pay 120"
    when = run.created_at.strftime("%Y-%m-%d %H:%M UTC")
    assert message.body == (
        "Pay 120\n\n"
        f"Started by analyst on {when} · One approval (one-ask) v1\n\n"
        "Input:\n  amount: 120\n  ref: " + "x" * 79 + "…\n\n"
        f"Open it: https://braid.example.org/inbox/?request={pk}\n\n"
        "It waits on finance, and you are a member.\n"
        "Turn these emails off: https://braid.example.org/inbox/notifications/"
    )
    assert Notice.objects.filter(request_id=pk, sent_at__isnull=False).count() == 2


def test_emails_are_written_without_reading_the_runs_graphs_snapshot_or_state(
    flow: str, client_for: ClientFor, committed: AfterCommit
) -> None:
    """A step that opens 500 requests of one run (a foreach of approvals) read and decoded
    the run's graphs and snapshot once per request to write their emails."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    run = start(client_for("analyst"), flow, {"amount": 5})
    with CaptureQueriesContext(connection) as captured:
        committed(lambda: notify.requested([request_id(run, "ask")]))
    read = " ".join(q["sql"] for q in captured.captured_queries)
    unread = ['"engine_run"."graphs"', '"engine_run"."snapshot"', '"engine_run"."state"',
              '"designer_flowversion"."graph"', '"designer_flow"."draft"']  # fmt: skip
    assert [column for column in unread if column in read] == []
    assert sorted(sent_to()) == [["controller@braid.example"], ["finance@braid.example"]]
    assert "Started by analyst" in mail.outbox[0].body


def test_nothing_is_sent_before_the_transaction_commits(flow: str, client_for: ClientFor) -> None:
    start(client_for("analyst"), flow, {"amount": 1})
    assert mail.outbox == []


def test_a_second_or_late_delivery_of_the_same_request_sends_nothing(
    flow: str, client_for: ClientFor, committed: AfterCommit
) -> None:
    run = committed(lambda: start(client_for("analyst"), flow, {"amount": 1}))
    pk = request_id(run, "ask")
    notify.requested([pk])
    notify.requested([pk])
    assert len(mail.outbox) == 2
    assert Notice.objects.filter(request_id=pk).count() == 2


def test_driving_the_run_again_sends_nothing_more(
    flow: str, client_for: ClientFor, committed: AfterCommit
) -> None:
    run = committed(lambda: start(client_for("analyst"), flow, {"amount": 1}))
    committed(lambda: drain(run))
    committed(lambda: hooks.opened(list(ApprovalRequest.objects.filter(run=run))))
    assert len(mail.outbox) == 2


def test_the_starter_is_not_told_about_their_own_runs_request(
    flow: str, client_for: ClientFor, committed: AfterCommit
) -> None:
    committed(lambda: start(client_for("finance"), flow, {"amount": 1}))
    assert sent_to() == [["controller@braid.example"]]


def test_a_person_who_turned_emails_off_gets_none(
    flow: str, client_for: ClientFor, committed: AfterCommit
) -> None:
    finance = client_for("finance")
    answer = finance.put("/api/me/notifications/", {"email_requests": False},
                         content_type="application/json")  # fmt: skip
    assert (answer.status_code, answer.json()) == (200, {"email_requests": False})
    committed(lambda: start(client_for("analyst"), flow, {"amount": 1}))
    assert sent_to() == [["controller@braid.example"]]


def test_a_person_without_an_address_is_skipped(
    flow: str, client_for: ClientFor, committed: AfterCommit
) -> None:
    User.objects.filter(username="controller").update(email="")
    committed(lambda: start(client_for("analyst"), flow, {"amount": 1}))
    assert sent_to() == [["finance@braid.example"]]


def test_a_delegation_emails_the_delegate_with_who_delegated(
    flow: str, client_for: ClientFor, committed: AfterCommit
) -> None:
    run = committed(lambda: start(client_for("analyst"), flow, {"amount": 5}))
    pk = request_id(run, "ask")
    mail.outbox.clear()
    answer = committed(lambda: post(client_for("finance"), f"/api/approvals/{pk}/delegate/",
                                    {"to": "controller"}))  # fmt: skip
    assert answer.status_code == 200, answer.content
    [message] = mail.outbox
    assert (message.to, message.subject) == (["controller@braid.example"], "[Braid] Pay 5")
    assert "finance delegated their part of this request to you." in message.body


def test_a_reassignment_emails_the_assignee(
    flow: str, client_for: ClientFor, committed: AfterCommit
) -> None:
    member("deputy", "legal")
    run = committed(lambda: start(client_for("analyst"), flow, {"amount": 5}))
    pk = request_id(run, "ask")
    mail.outbox.clear()
    answer = committed(lambda: post(client_for("admin"), f"/api/approvals/{pk}/reassign/",
                                    {"to": "deputy"}))  # fmt: skip
    assert answer.status_code == 200, answer.content
    [message] = mail.outbox
    assert message.to == ["deputy@braid.example"]
    assert "An admin (admin) reassigned this request to you: you alone decide it." in message.body


def test_a_refused_delegation_emails_nobody(
    flow: str, client_for: ClientFor, committed: AfterCommit
) -> None:
    run = committed(lambda: start(client_for("analyst"), flow, {"amount": 5}))
    mail.outbox.clear()
    pk = request_id(run, "ask")
    answer = committed(lambda: post(client_for("finance"), f"/api/approvals/{pk}/delegate/",
                                    {"to": "legal"}))  # fmt: skip
    assert answer.status_code == 400
    assert mail.outbox == []


def test_a_failing_mail_server_loses_nothing_and_is_logged(
    flow: str,
    client_for: ClientFor,
    committed: AfterCommit,
    settings: Settings,
    caplog: pytest.LogCaptureFixture,
) -> None:
    settings.MAILERS = {
        "default": {
            "BACKEND": "django.core.mail.backends.smtp.EmailBackend",
            "OPTIONS": {"host": "127.0.0.1", "port": 9, "timeout": 2},
        }
    }
    with caplog.at_level(logging.ERROR, logger="braid.approvals.notify"):
        run = committed(lambda: start(client_for("analyst"), flow, {"amount": 5}))
    pk = request_id(run, "ask")
    assert (run.status, ApprovalRequest.objects.get(pk=pk).status) == ("waiting", "open")
    notices = Notice.objects.filter(request_id=pk)
    assert notices.count() == 2
    assert all(n.sent_at is None and n.error.startswith("ConnectionRefusedError") for n in notices)
    assert caplog.text.count("approval email to") == 2


def test_a_step_opening_two_requests_for_one_person_sends_one_digest(
    demo: DemoUsers, client_for: ClientFor, committed: AfterCommit
) -> None:
    ask = {"type": "approval", "groups": ["legal"], "policy": "any"}
    graph = {
        "format": "braid.graph/1", "name": "Two asks", "state": {},
        "nodes": [{"id": "start", "type": "start"},
                  {"id": "split", "type": "fork", "branches": ["a", "b"]},
                  {"id": "ask_a", **ask, "title": "First"},
                  {"id": "ask_b", **ask, "title": "Second"},
                  {"id": "both", "type": "gather", "slots": ["a", "b"], "conflicts": "error"},
                  {"id": "done", "type": "end"}],
        "edges": [{"source": "start", "target": "split"},
                  {"source": "split", "branch": "a", "target": "ask_a"},
                  {"source": "split", "branch": "b", "target": "ask_b"},
                  {"source": "ask_a", "outcome": "approved", "target": "both", "slot": "a"},
                  {"source": "ask_b", "outcome": "approved", "target": "both", "slot": "b"},
                  {"source": "both", "target": "done"}],
    }  # fmt: skip
    publish(client_for("analyst"), "two-asks", graph)
    run = committed(lambda: start(client_for("analyst"), "two-asks", {}))
    first, second = request_id(run, "ask_a"), request_id(run, "ask_b")
    [message] = mail.outbox
    assert message.to == ["legal@braid.example"]
    assert message.subject == "[Braid] 2 new requests: First"
    assert f"- First\n  http://127.0.0.1:8000/inbox/?request={first}" in message.body
    assert f"- Second\n  http://127.0.0.1:8000/inbox/?request={second}" in message.body
    assert Notice.objects.filter(user__username="legal").count() == 2


# ------------------------------------------------------------------ the setting


def test_the_setting_is_on_until_turned_off(demo: DemoUsers, client_for: ClientFor) -> None:
    legal = client_for("legal")
    assert legal.get("/api/me/notifications/").json() == {"email_requests": True}
    legal.put("/api/me/notifications/", {"email_requests": False}, content_type="application/json")
    assert legal.get("/api/me/notifications/").json() == {"email_requests": False}
    assert NotificationSettings.objects.get(user__username="legal").email_requests is False


@pytest.mark.parametrize(
    ("body", "fields"),
    [
        ({"email_requests": "no"}, {"email_requests": "true or false"}),
        ({}, {"email_requests": "true or false"}),
        ({"sms": True}, {"email_requests": "true or false"}),
        ({"email_requests": None}, {"email_requests": "true or false"}),
        ([True], {"body": 'a JSON object such as {"email_requests": false}'}),
    ],
)
def test_a_bad_setting_is_a_400_naming_the_field(
    demo: DemoUsers, client_for: ClientFor, body: object, fields: dict[str, str]
) -> None:
    legal = client_for("legal")
    answer = legal.put("/api/me/notifications/", body, content_type="application/json")
    assert answer.status_code == 400
    assert (answer.json()["code"], answer.json()["fields"]) == ("notifications.invalid", fields)
    assert NotificationSettings.objects.count() == 0


def test_an_anonymous_caller_cannot_read_the_setting(db: None) -> None:
    assert Client().get("/api/me/notifications/").status_code == 403


def test_the_settings_page_turns_emails_off_and_on(demo: DemoUsers, client_for: ClientFor) -> None:
    legal = client_for("legal")
    page = legal.get("/inbox/notifications/").content.decode()
    assert 'name="email_requests" checked' in page
    assert "legal@braid.example" in page
    assert legal.post("/inbox/notifications/", {})["Location"] == "/inbox/notifications/"
    assert notify.emails_on(User.objects.get(username="legal")) is False
    legal.post("/inbox/notifications/", {"email_requests": "on"})
    assert notify.emails_on(User.objects.get(username="legal")) is True
