"""What a log line is about: the run, the node and the request, carried in context variables
and put on every record by ContextFilter (BRAID_LOG_FORMAT=json writes them out).

The step and the action code set the run and the node (engine/runtime/step.py, results.py);
web.request_ids sets the request. Context variables follow a request into the thread that
asgiref runs its view in, and each worker thread has its own, so two steps at once never
see each other's run.
"""

import logging
from contextvars import ContextVar, Token

RUN_ID: ContextVar[str] = ContextVar("braid_run_id", default="")
NODE: ContextVar[str] = ContextVar("braid_node", default="")
REQUEST_ID: ContextVar[str] = ContextVar("braid_request_id", default="")

FIELDS = (("run_id", RUN_ID), ("node", NODE), ("request_id", REQUEST_ID))
REQUEST_ID_ATTRIBUTE = "braid_request_id"  # a request's id, kept on the request itself


class about_run:  # lower case: it reads as a function, `with about_run(run_id):`
    """Say that the lines logged in the block are about this run (and node, if given).

    A class, not a @contextmanager generator: a step and an action each enter one, and the
    generator cost about ten times as much (docs/operations.md, "Cost").
    """

    __slots__ = ("node", "node_token", "run_id", "run_token")
    run_token: Token[str]
    node_token: Token[str]

    def __init__(self, run_id: str, node: str = "") -> None:
        self.run_id, self.node = run_id, node

    def __enter__(self) -> None:
        self.run_token = RUN_ID.set(self.run_id)
        self.node_token = NODE.set(self.node)

    def __exit__(self, *exc: object) -> None:
        NODE.reset(self.node_token)
        RUN_ID.reset(self.run_token)


class ContextFilter(logging.Filter):
    """Adds run_id, node and request_id to each record where they apply (never rejects one).

    A record that already carries one (given in `extra=`) keeps its own. Django logs a
    response's 4xx or 5xx after the middleware returned, outside the request's context,
    with the request in `extra`: its id is then read from the request (REQUEST_ID_ATTRIBUTE,
    which web.request_ids sets).
    """

    def filter(self, record: logging.LogRecord) -> bool:
        for name, variable in FIELDS:
            value = variable.get()
            if value and not hasattr(record, name):
                setattr(record, name, value)
        if not hasattr(record, "request_id"):
            given = getattr(getattr(record, "request", None), REQUEST_ID_ATTRIBUTE, "")
            if given:
                record.request_id = given
        return True
