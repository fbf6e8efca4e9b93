"""One module per node type: what the scheduler does when a frame stands on that node.

Each module defines `KIND`, a `engine.core.stepper.NodeKind` of its handlers;
`engine.core.scheduler.KINDS` is the table of them. A new node type is one module here
and one row there.
"""
