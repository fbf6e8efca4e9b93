"""What an approver sees of a request's run without any `show` config: who started it, when,
the flow and its version, and a compact view of the run's input (docs/approvals.md).

Bounded whatever the input holds: at most FIELDS top-level fields, ITEMS items of a list,
KEYS keys of an object, DEPTH levels, TEXT characters of a string and LINE characters of a
field's text; what is cut is said ("… 7 more"). The inbox, the API and the notification
email all read these texts, so an approver sees the same words everywhere.
"""

import json
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

from approvals.models import ApprovalRequest

# What a reader of a request (its context, the inbox, an email) reads with it: its run's
# flow, version and starter, and its assignee.
RELATED = ("run__flow_version__flow", "run__started_by", "assignee")
# The columns of those rows that no reader uses, and that grow with the flow or the run:
# the run's graphs, snapshot, state and redrive, its version's graph, its flow's draft.
# Loaded with each request, each was decoded once per request: most of the inbox page's
# read, and a step that opened 500 requests of one run decoded its snapshot 500 times for
# their emails.
UNREAD = ("run__graphs", "run__snapshot", "run__state", "run__redrive",
          "run__flow_version__graph", "run__flow_version__flow__draft")  # fmt: skip


def with_related() -> QuerySet[ApprovalRequest]:
    """Return requests with the RELATED rows a reader uses, without their UNREAD columns."""
    return ApprovalRequest.objects.select_related(*RELATED).defer(*UNREAD)


FIELDS, ITEMS, KEYS, DEPTH, TEXT, LINE = 8, 3, 4, 2, 80, 200
ELLIPSIS = "…"


def cut(text: str, limit: int) -> str:
    """Return text shortened to `limit` characters, ending in an ellipsis when cut."""
    return text if len(text) <= limit else text[: limit - 1] + ELLIPSIS


def more(count: int) -> str:
    """Return the marker of `count` left-out items: '… 7 more'."""
    return f"{ELLIPSIS} {count} more"


def counted(count: int, noun: str) -> str:
    """Return '1 key' or '3 keys'."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def compact_text(value: Any, depth: int = 0) -> str:
    """Return a value as one short line of text: strings bare, lists and objects shortened."""
    if isinstance(value, str):
        return cut(value, TEXT)
    if isinstance(value, list):
        if depth >= DEPTH:
            return f"[{ELLIPSIS} {counted(len(value), 'item')}]" if value else "[]"
        parts = [compact_text(item, depth + 1) for item in value[:ITEMS]]
        if len(value) > ITEMS:
            parts.append(more(len(value) - ITEMS))
        return "[" + ", ".join(parts) + "]"
    if isinstance(value, dict):
        if depth >= DEPTH:
            return f"{{{ELLIPSIS} {counted(len(value), 'key')}}}" if value else "{}"
        keys = sorted(value)  # by name: PostgreSQL's jsonb keeps no key order
        parts = [f"{cut(str(k), TEXT)}: {compact_text(value[k], depth + 1)}" for k in keys[:KEYS]]
        if len(keys) > KEYS:
            parts.append(more(len(keys) - KEYS))
        return "{" + ", ".join(parts) + "}"
    return json.dumps(value)


@dataclass(frozen=True, slots=True)
class CompactInput:
    """A run's input in a few lines: (field, text) pairs and how many fields were left out."""

    fields: list[dict[str, str]]
    more: int


def compact_input(value: Any) -> CompactInput:
    """Return the input's top-level fields as short texts; a non-object input is one field."""
    if value is None:
        return CompactInput([], 0)
    if not isinstance(value, dict):
        return CompactInput([{"field": "input", "text": cut(compact_text(value), LINE)}], 0)
    # By name, so both stores show the same: PostgreSQL's jsonb keeps no key order.
    keys = sorted(value)
    fields = [
        {"field": cut(str(k), TEXT), "text": cut(compact_text(value[k]), LINE)}
        for k in keys[:FIELDS]
    ]
    return CompactInput(fields, max(0, len(keys) - FIELDS))


def request_context(approval: ApprovalRequest) -> dict[str, Any]:
    """Return who started the request's run, when, the flow and version, and its input.

    The input is left out (`input: null`) when the node chose what to show (`show`): the
    analyst's choice replaces it. The run and its flow version must be loaded with it.
    """
    run = approval.run
    version = run.flow_version
    starter = run.started_by
    context: dict[str, Any] = {
        "started_by": starter.get_username() if starter else None,
        "started_at": run.created_at,
        "flow": version.flow.slug if version else None,
        "flow_name": version.flow.name if version else run.label,
        "version": version.number if version else None,
        "input": None,
        "input_more": 0,
    }
    if not approval.shown:
        compact = compact_input(run.input)
        context["input"], context["input_more"] = compact.fields, compact.more
    return context


def started_text(context: dict[str, Any]) -> str:
    """Return 'Started by finance on 2026-12-06 05:13 UTC · Invoice sign-off (invoice) v2'."""
    who = context["started_by"] or "nobody (a command line run)"
    when = context["started_at"].strftime("%Y-%m-%d %H:%M UTC")
    flow = context["flow_name"]
    if context["flow"]:
        flow = f"{flow} ({context['flow']}) v{context['version']}"
    return f"Started by {who} on {when} · {flow}"
