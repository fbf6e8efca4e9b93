"""The monitor's colors and their reasons (CONTRACT §4), from the graph, rows and run status.

Two walks answer one question. Root → leaves (`explain`) colors every node of a run;
leaf → root (`explain_node`) colors one node by climbing only its ancestors. Both apply
the same rule, `Walk.settle`, and combine the arrivals of a node's incoming edges with the
same total order, so they agree on every node (a property test holds them to it).

Descend from `start` carrying the live execution id. A node whose row belongs to that
execution shows its status; decisions paint whole subgraphs: the outcome an IF/switch or
approval did not take is skipped, downstream of a failure is skipped, an older
iteration's row under a live loop is pending, and anything not reached is pending
(skipped once the run finished). Skipped, cancelled and pending are never stored.

A color never contradicts what happened: where an activation ended early (a cancel, a
failure, a race lost, a loop at its limit), the nodes inside it keep the truth of their
rows. Completed and failed rows show that, a row left running or waiting is cancelled,
and a node with no row is skipped; foreach and loop bodies included (Arrival.loose,
Arrival.cut).

Every color carries a reason a person can read, naming the node that decided it. The
derivation table is docs/monitor-states.md.

The package: `arrivals` (colors, arrivals, verdicts), `evidence` (what the trace says),
`shapes` (the graph as walked), `reasons`, `walk` (root -> leaves), `climb` (leaf -> root)
and `runs` (`explain`, `explain_node`, `explain_run`). The names the engine, the monitor
and the tests read are re-exported here.
"""

from __future__ import annotations

from engine.core.colors.arrivals import (
    Arrival,
    Color,
    Verdict,
)
from engine.core.colors.evidence import (
    FRAME_EVENTS,
    LOOP_EVENTS,
    Vote,
    cancel_time,
    cancelled_words,
    clock_time,
    older_round_candidates,
    parent_text,
    rows_cut_short,
    rows_in_older_rounds,
    run_cancelled_words,
    votes_from,
)
from engine.core.colors.runs import (
    colors,
    explain,
    explain_node,
    explain_run,
)
from engine.core.colors.shapes import (
    approvals_of,
    loops_of,
)

__all__ = [
    "FRAME_EVENTS",
    "LOOP_EVENTS",
    "Arrival",
    "Color",
    "Verdict",
    "Vote",
    "approvals_of",
    "cancel_time",
    "cancelled_words",
    "clock_time",
    "colors",
    "explain",
    "explain_node",
    "explain_run",
    "loops_of",
    "older_round_candidates",
    "parent_text",
    "rows_cut_short",
    "rows_in_older_rounds",
    "run_cancelled_words",
    "votes_from",
]
