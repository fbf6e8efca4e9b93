"""Approval emails: a new request tells the people who may decide it; a delegation or a
reassignment tells the new decider (docs/approvals.md, "Notifications").

Sent through Django's email framework after the transaction that opened or handed over the
request commits (console backend under `make run`, locmem in tests). Each (request, person,
reason) is sent at most once: a delivery first inserts `Notice` rows under its own claim,
ignoring conflicts, and sends only the rows it inserted, so a repeated or late delivery
sends nothing. Sending never raises into the engine or the view: a failure is logged and
kept on the notice. The words are the inbox's: the request's title, instructions and the
context of approvals/context.py.
"""

import logging
import uuid
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail import EmailMessage, mailers
from django.db import transaction
from django.utils import timezone

from approvals.context import compact_text, request_context, started_text, with_related
from approvals.models import ApprovalRequest, Notice, NoticeReason, NotificationSettings

logger = logging.getLogger("braid.approvals.notify")

DIGEST_TITLES = 10  # a digest lists this many requests, then says how many more


@dataclass(frozen=True, slots=True)
class Recipient:
    """A person to tell: their id, name and address."""

    pk: int
    username: str
    email: str


def base_url() -> str:
    """Return the site's address for absolute links, without a trailing slash."""
    return str(settings.BRAID_BASE_URL).rstrip("/")


def request_url(pk: int) -> str:
    """Return the absolute link to a request in the inbox."""
    return f"{base_url()}/inbox/?request={pk}"


def opted_out(pks: Iterable[int]) -> set[int]:
    """Return which of these users turned approval emails off."""
    off = NotificationSettings.objects.filter(user_id__in=list(pks), email_requests=False)
    return set(off.values_list("user_id", flat=True))


def reachable(users: Iterable[Recipient]) -> list[Recipient]:
    """Return the people with an address who did not turn the emails off."""
    people = [u for u in users if u.email]
    off = opted_out(u.pk for u in people)
    return [u for u in people if u.pk not in off]


def group_members(groups: Sequence[str]) -> dict[str, list[Recipient]]:
    """Return the active members of each group, with their addresses (one query)."""
    members: dict[str, list[Recipient]] = defaultdict(list)
    model, name_field = get_user_model(), str(get_user_model().USERNAME_FIELD)
    rows = model.objects.filter(is_active=True, groups__name__in=list(groups)).values_list(
        "pk", name_field, "email", "groups__name"
    )
    for pk, name, email, group in rows:
        members[group].append(Recipient(pk, name, email or ""))
    return members


def deciders_of(approval: ApprovalRequest, members: dict[str, list[Recipient]]) -> list[Recipient]:
    """Return the members of a new request's groups who may decide it: not its run's starter
    (unless the node allows it), each person once."""
    starter = None if approval.allow_starter else approval.run.started_by_id
    people = {u.pk: u for grp in approval.groups for u in members.get(grp, []) if u.pk != starter}
    return list(people.values())


def claim(pairs: Sequence[tuple[int, int]], reason: NoticeReason) -> set[tuple[int, int]]:
    """Insert a notice per (request id, user id) under a fresh claim; return the pairs this
    delivery inserted (a pair another delivery inserted first is not this one's to send)."""
    if not pairs:
        return set()
    token = uuid.uuid4()
    Notice.objects.bulk_create(
        [Notice(request_id=r, user_id=u, reason=reason, claim=token) for r, u in pairs],
        ignore_conflicts=True,
    )
    return set(Notice.objects.filter(claim=token).values_list("request_id", "user_id"))


def why_text(approval: ApprovalRequest, reason: NoticeReason, by: str) -> str:
    """Return the sentence that says why the person gets the email."""
    if reason is NoticeReason.DELEGATED:
        return f"{by} delegated their part of this request to you."
    if reason is NoticeReason.REASSIGNED:
        return f"An admin ({by}) reassigned this request to you: you alone decide it."
    return f"It waits on {' or '.join(approval.groups)}, and you are a member."


def values_lines(approval: ApprovalRequest, context: dict[str, Any]) -> list[str]:
    """Return the lines of values the inbox shows: the node's `show`, or the compact input."""
    if approval.shown:
        return [f"  {item['field']}: {compact_text(item['value'])}" for item in approval.shown]
    fields = context["input"] or []
    lines = [f"  {item['field']}: {item['text']}" for item in fields]
    if context["input_more"]:
        lines.append(f"  … {context['input_more']} more fields")
    return lines


def request_text(approval: ApprovalRequest) -> str:
    """Return a request as the inbox shows it: title, instructions, context and values."""
    context = request_context(approval)
    lines = [approval.title, ""]
    if approval.instructions:
        lines += [approval.instructions, ""]
    lines.append(started_text(context))
    values = values_lines(approval, context)
    if values:
        lines += ["", "Input:" if not approval.shown else "Shown:", *values]
    return "\n".join(lines)


def one_message(
    approval: ApprovalRequest, to: Recipient, reason: NoticeReason, by: str
) -> EmailMessage:
    """Return the email about one request."""
    body = "\n".join([
        request_text(approval), "",
        f"Open it: {request_url(approval.pk)}", "",
        why_text(approval, reason, by),
        f"Turn these emails off: {base_url()}/inbox/notifications/",
    ])  # fmt: skip
    return EmailMessage(f"[Braid] {approval.title}", body, to=[to.email])


def digest_message(approvals: Sequence[ApprovalRequest], to: Recipient) -> EmailMessage:
    """Return one email about many new requests for one person (a step opened them together)."""
    listed = [f"- {a.title}\n  {request_url(a.pk)}" for a in approvals[:DIGEST_TITLES]]
    if len(approvals) > DIGEST_TITLES:
        listed.append(f"… {len(approvals) - DIGEST_TITLES} more")
    first = approvals[0]
    body = "\n".join([
        f"{len(approvals)} new requests wait on your decision.", "",
        started_text(request_context(first)), "", *listed, "",
        f"Your inbox: {base_url()}/inbox/",
        f"Turn these emails off: {base_url()}/inbox/notifications/",
    ])  # fmt: skip
    subject = f"[Braid] {len(approvals)} new requests: {first.title}"
    return EmailMessage(subject, body, to=[to.email])


def send(messages: list[tuple[EmailMessage, list[tuple[int, int]]]], reason: NoticeReason) -> None:
    """Send each message and note its notices sent or failed; a failure is logged, never
    raised (the request is open whatever happens to its email)."""
    connection = mailers.default
    for message, pairs in messages:
        notices = Notice.objects.filter(reason=reason, user_id=pairs[0][1],
                                        request_id__in=[r for r, _ in pairs])  # fmt: skip
        try:
            connection.send_messages([message])
        except Exception as failure:
            logger.exception("approval email to %s failed: %s", message.to, failure)
            notices.update(error=f"{type(failure).__name__}: {failure}"[:2000])
        else:
            notices.update(sent_at=timezone.now())


def requested(pks: Sequence[int]) -> None:
    """Tell the people who may decide these new requests (one email each, or one digest
    per person when a step opened several for them)."""
    approvals = list(with_related().filter(pk__in=list(pks)).order_by("id"))
    members = group_members(sorted({g for a in approvals for g in a.groups}))
    wanted: dict[int, Recipient] = {}
    pairs = []
    for approval in approvals:
        for person in reachable(deciders_of(approval, members)):
            wanted[person.pk] = person
            pairs.append((approval.pk, person.pk))
    mine = claim(pairs, NoticeReason.REQUESTED)
    index = {a.pk: a for a in approvals}
    by_person: dict[int, list[ApprovalRequest]] = defaultdict(list)
    for approval_pk, person_pk in sorted(mine):
        by_person[person_pk].append(index[approval_pk])
    messages = []
    for person_pk, theirs in by_person.items():
        person = wanted[person_pk]
        message = (one_message(theirs[0], person, NoticeReason.REQUESTED, "")
                   if len(theirs) == 1 else digest_message(theirs, person))  # fmt: skip
        messages.append((message, [(a.pk, person_pk) for a in theirs]))
    send(messages, NoticeReason.REQUESTED)


def handed_over(pk: int, to: str, reason: NoticeReason, by: str) -> None:
    """Tell the person a request was delegated or reassigned to."""
    model, name_field = get_user_model(), str(get_user_model().USERNAME_FIELD)
    person = model.objects.filter(**{name_field: to}, is_active=True).first()
    approval = with_related().filter(pk=pk).first()
    if person is None or approval is None:
        return
    recipient = Recipient(person.pk, to, getattr(person, "email", "") or "")
    if not reachable([recipient]) or not claim([(pk, person.pk)], reason):
        return
    send([(one_message(approval, recipient, reason, by), [(pk, person.pk)])], reason)


def safely(work: partial[None]) -> None:
    """Run a notification; log and swallow anything it raises (the step is committed)."""
    try:
        work()
    except Exception:
        logger.exception("approval notification failed: %s", work.func.__name__)


def after_commit_requested(pks: Sequence[int]) -> None:
    """Tell the deciders of these new requests once the transaction commits."""
    transaction.on_commit(partial(safely, partial(requested, list(pks))))


def after_commit_handed_over(pk: int, to: str, reason: NoticeReason, by: str) -> None:
    """Tell the new decider of a request once the transaction commits."""
    transaction.on_commit(partial(safely, partial(handed_over, pk, to, reason, by)))


def emails_on(user: object) -> bool:
    """Return whether a person gets approval emails (on unless they turned them off)."""
    pk: Any = getattr(user, "pk", None)  # None for an anonymous caller
    found = NotificationSettings.objects.filter(user_id=pk).first()
    return True if found is None else found.email_requests


def set_emails(user: object, on: bool) -> None:
    """Turn a person's approval emails on or off."""
    pk: Any = getattr(user, "pk", None)  # None for an anonymous caller
    NotificationSettings.objects.update_or_create(user_id=pk, defaults={"email_requests": on})
