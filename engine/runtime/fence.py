"""The fence of node-row writes as SQL: one `INSERT ... ON CONFLICT DO UPDATE ... WHERE`.

A row lands only when the incoming execution id is not superseded by the stored one, with
the contract's equal-id rule. The writer never reads before writing and never learns
whether a write landed. Each storage backend sends it in its own form.
"""

from collections.abc import Sequence

from engine.core.events import WriteRow
from engine.core.rows import NodeRow, apply_write
from engine.models import NodeState
from engine.models import RowStatus as RowChoices

TERMINAL = (RowChoices.COMPLETED.value, RowChoices.FAILED.value)
COLUMNS = "run_id, node, status, status_detail, execution_id, result, attempt, updated_at"
ROWS_PER_STATEMENT = 500


def fence_condition(table: str, collate: str) -> str:
    """Return the ON CONFLICT ... WHERE of the fence (byte order for ids on PostgreSQL)."""
    new, old = f"excluded.status_detail{collate}", f"{table}.status_detail{collate}"
    return f"""
        ON CONFLICT (run_id, node) DO UPDATE SET
            status = excluded.status, status_detail = excluded.status_detail,
            execution_id = excluded.execution_id, result = excluded.result,
            attempt = excluded.attempt, updated_at = excluded.updated_at
        WHERE {new} > {old}
           OR ({new} = {old} AND (excluded.attempt > {table}.attempt
               OR (excluded.attempt = {table}.attempt
                   AND {table}.status NOT IN ('{TERMINAL[0]}', '{TERMINAL[1]}'))))
    """


def fenced_upsert_sql(count: int, collate: str = "") -> str:
    """Return the fenced upsert of `count` rows as one VALUES list (SQLite's form);
    `collate` is the backend's byte-order collation of ids (storage.backend().collate)."""
    table = NodeState._meta.db_table
    values = ", ".join(["(%s, %s, %s, %s, %s, %s, %s, %s)"] * count)
    return f"INSERT INTO {table} ({COLUMNS}) VALUES {values}" + fence_condition(table, collate)


def collapse(rows: Sequence[WriteRow]) -> list[NodeRow]:
    """Fold one batch's writes per node with the fence rule itself.

    What lands of the folded batch over a stored row is what the writes would leave one by
    one, and one statement may not touch a row twice.
    """
    winners: dict[str, NodeRow] = {}
    for row in rows:
        apply_write(winners, row)
    return list(winners.values())
