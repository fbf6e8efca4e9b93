"""The approval audit: append-only ApprovalEvent entries, each chained to the one before.

An entry's hash is sha256 over the previous entry's hash and the entry's canonical JSON
(sorted keys, no spaces, UTF-8). Editing, removing or reordering any stored entry breaks
the chain from that entry on, and `verify` names the first entry that does not match.

Appends are serialized by writing the one AuditHead row first: the write lock comes
before the read, on PostgreSQL (row lock) and SQLite (database lock) alike, so two
transactions can never chain onto the same head.
"""

import datetime as dt
import enum
import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import connection, transaction
from django.db.models import Field
from django.utils import timezone

from approvals.models import ApprovalEvent, ApprovalRequest, AuditHead, EventKind

GENESIS = "0" * 64
ENTRIES_PER_STATEMENT = 500


@dataclass(frozen=True, slots=True)
class Entry:
    """An entry to append: what happened to which request, by whom, with what detail."""

    kind: EventKind
    request: ApprovalRequest
    actor: str = ""
    detail: dict[str, Any] = field(default_factory=dict)


def canonical(event: ApprovalEvent) -> str:
    """Return the entry's content as canonical JSON (what the hash covers)."""
    return json.dumps(
        {
            "seq": event.seq,
            "at": event.at.astimezone(dt.UTC).isoformat(),
            "kind": str(event.kind),
            "request": event.request_id,
            "run": str(event.run_id),
            "node": event.node,
            "execution_id": event.execution_id,
            "actor": event.actor,
            "detail": event.detail,
        },
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )


def chain_hash(prev_hash: str, event: ApprovalEvent) -> str:
    """Return sha256 over the previous hash and the entry's canonical content."""
    return hashlib.sha256(f"{prev_hash}\n{canonical(event)}".encode()).hexdigest()


def lock_head(count: int) -> tuple[int, str]:
    """Reserve `count` numbers by writing the head first; return the last seq and hash before.

    One statement writes, locks and reads the head (UPDATE ... RETURNING, on PostgreSQL and
    SQLite alike): an approval's decision and its close each append an entry, and the two
    statements of a write and a read cost them about a millisecond each.
    """
    reserve = (f"UPDATE {AuditHead._meta.db_table} SET seq = seq + %s WHERE id = 1 "
               "RETURNING seq, hash")  # fmt: skip
    with connection.cursor() as cursor:
        cursor.execute(reserve, [count])
        row = cursor.fetchone()
        if row is None:  # the first entry ever
            AuditHead.objects.bulk_create([AuditHead(pk=1)], ignore_conflicts=True)
            cursor.execute(reserve, [count])
            row = cursor.fetchone()
    seq, head_hash = row
    return seq - count, head_hash or GENESIS


def append(entries: Sequence[Entry]) -> list[ApprovalEvent]:
    """Append entries to the chain in order, in the caller's transaction; return them.

    No savepoint of its own: an entry that cannot be appended fails the caller's whole
    transaction, so nothing is recorded without its audit. Two statements: the head's lock
    (lock_head), then the entries with the new head hash (write_entries).
    """
    if not entries:
        return []
    with transaction.atomic(savepoint=False):
        seq, prev = lock_head(len(entries))
        at = timezone.now()
        events = []
        for offset, entry in enumerate(entries, start=1):
            event = ApprovalEvent(
                seq=seq + offset, at=at, kind=entry.kind, request_id=entry.request.pk,
                run_id=entry.request.run_id, node=entry.request.node,
                execution_id=entry.request.execution_id, actor=entry.actor,
                detail=entry.detail, prev_hash=prev,
            )  # fmt: skip
            event.hash = prev = chain_hash(prev, event)
            events.append(event)
        write_entries(events, prev)
    return events


def write_entries(events: Sequence[ApprovalEvent], head_hash: str) -> None:
    """Insert the entries and set the head's hash: on PostgreSQL one statement (the insert
    in a WITH), elsewhere two; past ENTRIES_PER_STATEMENT, one insert per so many entries
    (each row is 11 parameters; SQLite takes 32,766 a statement, PostgreSQL 65,535), then
    the hash. Each value is prepared by its field, as the ORM's insert prepares it; the
    entries' ids are not read back (nothing uses them)."""
    fields = [f for f in ApprovalEvent._meta.concrete_fields if f is not ApprovalEvent._meta.pk]
    columns = ", ".join(connection.ops.quote_name(f.column or f.attname) for f in fields)
    row = "(" + ", ".join(["%s"] * len(fields)) + ")"
    head = f"UPDATE {AuditHead._meta.db_table} SET hash = %s WHERE id = 1"
    chunks = [events[i : i + ENTRIES_PER_STATEMENT]
              for i in range(0, len(events), ENTRIES_PER_STATEMENT)]  # fmt: skip
    with connection.cursor() as cursor:
        for number, chunk in enumerate(chunks, start=1):
            values = [prepared(f, getattr(e, f.attname)) for e in chunk for f in fields]
            insert = (f"INSERT INTO {ApprovalEvent._meta.db_table} ({columns}) "
                      f"VALUES {', '.join([row] * len(chunk))}")  # fmt: skip
            if number == len(chunks) == 1 and connection.vendor == "postgresql":
                cursor.execute(f"WITH entries AS ({insert}) {head}", [*values, head_hash])
                return
            cursor.execute(insert, values)
        cursor.execute(head, [head_hash])


def prepared(column: "Field[Any, Any]", value: Any) -> Any:
    """Return a value as the field's insert sends it; a choice goes as its text."""
    value = column.get_db_prep_save(value, connection)
    return value.value if isinstance(value, enum.Enum) else value


def record(kind: EventKind, request: ApprovalRequest, actor: str = "", **detail: Any) -> None:
    """Append one entry."""
    append([Entry(kind, request, actor, detail)])


@dataclass(frozen=True, slots=True)
class Verdict:
    """The result of verifying the chain: how many entries, and the first broken one."""

    entries: int
    broken_seq: int | None = None
    broken_id: int | None = None
    reason: str = ""

    @property
    def ok(self) -> bool:
        """Return whether the whole chain verified."""
        return self.broken_seq is None


def verify(events: Iterable[ApprovalEvent] | None = None) -> Verdict:
    """Recompute the chain in seq order; return the first entry that breaks it, if any."""
    if events is None:
        events = ApprovalEvent.objects.order_by("seq").iterator(chunk_size=2000)
    prev, expected_seq, count = GENESIS, 1, 0
    for event in events:
        problem = chain_problem(event, prev, expected_seq)
        if problem:
            return Verdict(count, event.seq, event.pk, problem)
        prev, expected_seq, count = event.hash, event.seq + 1, count + 1
    head = AuditHead.objects.filter(pk=1).first()
    if head is not None and head.hash and (head.seq, head.hash) != (expected_seq - 1, prev):
        return Verdict(count, expected_seq, None, "entries after this one were removed")
    return Verdict(count)


def chain_problem(event: ApprovalEvent, prev: str, expected_seq: int) -> str:
    """Return why an entry breaks the chain, or '' when it fits."""
    if event.seq != expected_seq:
        return f"expected entry #{expected_seq} here, found #{event.seq} (entries removed)"
    if event.prev_hash != prev:
        return "its previous hash is not the hash of the entry before it"
    if event.hash != chain_hash(prev, event):
        return "its content does not match its hash (the entry was changed)"
    return ""


def history(request_ids: Iterable[int]) -> dict[int, list[ApprovalEvent]]:
    """Return the audit entries of some requests, by request id, oldest first."""
    found: dict[int, list[ApprovalEvent]] = {}
    for event in ApprovalEvent.objects.filter(request_id__in=list(request_ids)).order_by("seq"):
        found.setdefault(event.request_id, []).append(event)
    return found
