"""`braid demo` creates the demo groups and users, and running it twice changes nothing;
it creates only the demo flows that are missing, unless `--refresh` asks for this Braid's."""

import io
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import call_command

from designer import services
from designer.demo import demo_documents
from designer.models import DraftRevision, Flow, FlowVersion


def memberships() -> dict[str, list[str]]:
    """Return each user's groups, sorted."""
    return {
        user.username: sorted(user.groups.values_list("name", flat=True))
        for user in User.objects.order_by("username")
    }


@pytest.mark.django_db
def test_demo_creates_an_analyst_two_approvers_and_an_admin(
    capsys: pytest.CaptureFixture[str],
) -> None:
    call_command("braid", "demo")
    assert memberships() == {
        "admin": ["admins"],
        "analyst": ["analysts"],
        "finance": ["finance"],
        "legal": ["legal"],
    }
    assert sorted(Group.objects.values_list("name", flat=True)) == [
        "admins",
        "analysts",
        "finance",
        "legal",
    ]
    assert "analyst   braid-analyst" in capsys.readouterr().out
    assert User.objects.get(username="admin").is_staff


@pytest.mark.django_db
def test_running_demo_twice_changes_nothing_and_restores_a_changed_password() -> None:
    call_command("braid", "demo")
    user = User.objects.get(username="legal")
    user.set_password("changed")
    user.save()
    call_command("braid", "demo")
    assert User.objects.count() == 4
    assert Group.objects.count() == 4
    assert User.objects.get(username="legal").check_password("braid-legal")


KEPT_HINT = (
    "  `.venv/bin/python manage.py braid demo --refresh` replaces them with this Braid's own;"
    " the drafts it replaces stay in each flow's history"
)


def demo_output(*options: str) -> list[str]:
    """Run `braid demo` with the options; return its flow lines (the logins come after)."""
    out = io.StringIO()
    call_command("braid", "demo", *options, stdout=out)
    lines = out.getvalue().splitlines()
    return lines[: lines.index("Demo logins (user / password / groups):")]


def edit_and_publish(slug: str, name: str) -> dict[str, Any]:
    """Rename a flow's draft as an analyst would in the editor, publish it; return it."""
    flow = Flow.objects.get(slug=slug)
    edited = {**flow.draft, "name": name}
    analyst = User.objects.get(username="analyst")
    services.publish(services.save_draft(flow, edited, user=analyst), analyst)
    return edited


@pytest.mark.django_db
def test_demo_keeps_an_edited_demo_flow_and_recreates_only_a_deleted_one() -> None:
    first = demo_output()
    edited = edit_and_publish("invoice-sign-off", "Our invoice sign-off")
    services.delete_flow(Flow.objects.get(slug="vendor-payment"))

    again = demo_output()

    assert first == [
        "Created 7 demo flows: a-risk-score (v1), approval-or-timeout (v1), b-and-d-or-e (v1),"
        " batch-line-approval (v1), invoice-sign-off (v1), staged-gathers (v1),"
        " vendor-payment (v1)"
    ]
    assert again == [
        "Created 1 demo flow: vendor-payment (v1)",
        "Kept 6 demo flows you already have, as they are: a-risk-score, approval-or-timeout,"
        " b-and-d-or-e, batch-line-approval, invoice-sign-off, staged-gathers",
        KEPT_HINT,
    ]
    invoice = Flow.objects.get(slug="invoice-sign-off")
    assert (invoice.draft, invoice.name) == (edited, "Our invoice sign-off")
    assert list(invoice.versions.values_list("number", "graph__name")) == [
        (1, "Invoice sign-off"),
        (2, "Our invoice sign-off"),
    ]
    assert DraftRevision.objects.count() == 0
    assert FlowVersion.objects.count() == 8


@pytest.mark.django_db
def test_refresh_replaces_an_edited_demo_flow_and_keeps_the_edit_in_its_history() -> None:
    demo_output()
    edited = edit_and_publish("invoice-sign-off", "Our invoice sign-off")

    refreshed = demo_output("--refresh")

    assert refreshed == [
        "Refreshed 7 demo flows: a-risk-score (v1, already current),"
        " approval-or-timeout (v1, already current), b-and-d-or-e (v1, already current),"
        " batch-line-approval (v1, already current), invoice-sign-off (v3),"
        " staged-gathers (v1, already current), vendor-payment (v1, already current)"
    ]
    invoice = Flow.objects.get(slug="invoice-sign-off")
    original = dict(demo_documents())["invoice-sign-off"]
    assert (invoice.draft, invoice.name) == (original, "Invoice sign-off")
    assert invoice.versions.get(number=3).graph == original
    assert list(DraftRevision.objects.values_list("flow__slug", "draft", "reason")) == [
        ("invoice-sign-off", edited, "import")
    ]
