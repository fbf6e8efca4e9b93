"""Validate `braid.graph/1` documents: every rule of the contract in one pass, plus join warnings.

The rules, the codes and the join analysis are explained in docs/validation.md.

The package: `problems` (codes, severities, the report), `flow` (the graph indexed for
the checks), `local` (checks of one edge or node), `traversal` (checks that walk from
start), `joins` (join warnings) and `validator` (`validate`, which runs them all). The
public names are re-exported here, as the engine, the apps, bench and tests import them.
"""

from __future__ import annotations

from engine.core.validation.problems import (
    BUILTIN_ACTIONS,
    HTTP_REQUEST,
    MAX_EDGES,
    MAX_NODES,
    WARNING_CODES,
    Problem,
    ProblemCode,
    Report,
    Severity,
)
from engine.core.validation.validator import validate

__all__ = [
    "BUILTIN_ACTIONS",
    "HTTP_REQUEST",
    "MAX_EDGES",
    "MAX_NODES",
    "WARNING_CODES",
    "Problem",
    "ProblemCode",
    "Report",
    "Severity",
    "validate",
]
