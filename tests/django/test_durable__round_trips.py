"""What a chain step costs in round trips to PostgreSQL, counted on the wire.

A round trip is the client sending and then waiting for the server's answer; libpq's trace
of the connection shows each as a run of frontend messages followed by backend ones. A hop
of a chain (an action's result recorded and the next step taken, in the task that ran the
action) costs two: psycopg's BEGIN, and one pipeline of the step computed before its lock
(the lock, the result, the step's writes and the next dispatch in one statement), COMMIT
and the look for new events (step.step_ahead). Taking the lock first, as a step whose
state this process does not hold does, was a round trip more; reading the pipeline's
answers inside the block would send a Flush and wait for it first, another. A statement's
first use on a connection prepares it, a round trip of its own; the count is taken on a
connection that has.
"""

import inspect
import re
import tempfile

import pytest
from django.db import connection
from psycopg import pq
from psycopg._queries import MAX_CACHED_STATEMENT_LENGTH, MAX_CACHED_STATEMENT_PARAMS

from engine.models import Run
from engine.runtime import results, runs
from engine.runtime.backends import postgresql_sql as sql
from engine.runtime.transport import use_transport
from runs.services import resolve_graphs
from tests.django.test_durable__dispatch import chain_of
from tests.django.test_durable__wakeup import Advances

pytestmark = pytest.mark.django_db(transaction=True)


def round_trips(trace: str) -> int:
    """Count the turns from the client's messages to the server's answers in a libpq trace."""
    count, last = 0, "B"
    for line in trace.splitlines():
        side = line[:1]
        if side == "B" and last == "F":
            count += 1
        if side in ("F", "B"):
            last = side
    return count


def chain_round_trips(tasks: int) -> int:
    """Start a chain of `tasks` noop tasks and count the round trips of the task that
    advances it from its start to its end."""
    kept = Advances()  # the messages are kept: the test runs the work itself
    before = use_transport(kept)
    try:
        run = runs.create_run(resolve_graphs(chain_of(tasks)), "chain", {})
        connection.ensure_connection()
        raw = connection.connection.pgconn
        with tempfile.TemporaryFile("w+") as trace:
            raw.trace(trace.fileno())
            raw.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS)
            try:
                assert results.advance_and_run(str(run.pk)) == 1
            finally:
                raw.untrace()
            trace.seek(0)
            counted = round_trips(trace.read())
    finally:
        use_transport(before)
    assert kept.sent == [str(run.pk)]  # the start's own message, nothing after
    assert Run.objects.get(pk=run.pk).status == "completed"
    return counted


def test_a_chain_hop_costs_two_round_trips() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("round trips are counted on PostgreSQL's wire protocol")
    chain_round_trips(1)  # this connection prepares the statements (a round trip each, once)
    four, eight = chain_round_trips(4), chain_round_trips(8)
    assert (eight - four) / 4 == 2


def test_round_trips_are_the_turns_from_client_to_server() -> None:
    trace = "F\t4\tSync\nF\t4\tFlush\nB\t5\tReadyForQuery\t I\nF\t9\tExecute\nB\t4\tNoData\n"
    assert round_trips(trace) == 2


def test_every_statement_of_the_backend_fits_psycopgs_query_cache() -> None:
    """psycopg converts a statement's text (its placeholders) once and keeps it, unless the
    text is longer than its cache takes: then at every execution. The step computed before
    its lock was 4,555 bytes as first written, indented, and cost a chain hop more
    instructions than the two statements it replaced (callgrind)."""
    statements = {
        name: make()
        for name, make in inspect.getmembers(sql, inspect.isfunction)
        if make.__module__ == sql.__name__ and not inspect.signature(make).parameters
    }
    statements |= {"STORED_PARTS": sql.STORED_PARTS, "INSERT_TRACE": sql.INSERT_TRACE,
                   "BEGIN_STEP": sql.BEGIN_STEP}  # fmt: skip
    assert {"step_ahead_sql", "commit_sql", "lock_and_take_sql"} <= set(statements)
    too_long = {name: len(text.encode()) for name, text in statements.items()
                if len(text.encode()) > MAX_CACHED_STATEMENT_LENGTH}  # fmt: skip
    assert too_long == {}
    named = {name: len(set(re.findall(r"%\((\w+)\)s", text))) for name, text in statements.items()}
    assert max(named.values()) <= MAX_CACHED_STATEMENT_PARAMS
