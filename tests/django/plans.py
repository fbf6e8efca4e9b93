"""The plans PostgreSQL executed for some statements, as auto_explain logs them.

A statement prepared on a connection is planned for its values five times; from the sixth
execution on, PostgreSQL may keep one generic plan, costed on the tables as they were
then, for the connection's life. The tests here run a statement six times while its table
is young, then grow the table, as a worker's first runs do.
"""

import json
import re
from collections.abc import Callable
from typing import Any

from django.db import connection

SETTINGS = ("auto_explain.log_min_duration", "auto_explain.log_analyze",
            "auto_explain.log_format", "auto_explain.log_nested_statements",
            "client_min_messages")  # fmt: skip


def executed_plans(action: Callable[[], object]) -> list[tuple[str, dict[str, Any]]]:
    """Run `action` and return each statement PostgreSQL executed for it with its plan, as
    auto_explain logs them."""
    notices: list[str] = []
    connection.ensure_connection()
    raw = connection.connection

    def note(diagnostic: Any) -> None:
        notices.append(diagnostic.message_primary or "")

    raw.add_notice_handler(note)
    with connection.cursor() as cursor:
        cursor.execute("LOAD 'auto_explain'")
        cursor.execute("SET auto_explain.log_min_duration = 0")
        cursor.execute("SET auto_explain.log_analyze = on")
        cursor.execute("SET auto_explain.log_format = json")
        cursor.execute("SET client_min_messages = log")
    try:
        action()
    finally:
        with connection.cursor() as cursor:
            for name in SETTINGS:
                cursor.execute(f"RESET {name}")
        raw.remove_notice_handler(note)
    plans = []
    for text in notices:
        if text.startswith("duration:") and "{" in text:
            logged = json.loads(text[text.index("{") :])
            plans.append((logged["Query Text"], logged["Plan"]))
    return plans


def walk(plan: dict[str, Any]) -> list[dict[str, Any]]:
    """Return a JSON plan node and every node under it."""
    return [plan, *(node for child in plan.get("Plans", ()) for node in walk(child))]


def examined(plan: dict[str, Any], operation: str) -> int:
    """Return the rows that the scans under a plan's first `operation` node (e.g. "Delete")
    read, kept or filtered out, over all their loops."""
    found = next(node for node in walk(plan) if node.get("Operation") == operation)
    return sum(
        (node["Actual Rows"] + node.get("Rows Removed by Filter", 0)) * node["Actual Loops"]
        for node in walk(found)[1:]
        if node["Node Type"].endswith("Scan")
    )


def parameter_arrays(plan: dict[str, Any]) -> list[str]:
    """Return the conditions that match against an array parameter (`= ANY ($3)`, or
    `= ANY (($3)::bigint[])`), which
    PostgreSQL searches element by element for every row; a constant array of 9 or more
    elements, planned for its values, is a hashed set."""
    return [
        node[key]
        for node in walk(plan)
        for key in ("Filter", "Index Cond", "Recheck Cond", "Join Filter")
        if re.search(r"ANY \(\(?\$\d", node.get(key, ""))
    ]
