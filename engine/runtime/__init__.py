"""The durable runtime: the pure core (engine/core) on the database, driven by messages.

Every change to a run goes through its inbox and one function, `step.advance`, which takes
the run's row lock, applies the pending events with the core's `step`, and commits the
snapshot, node rows, trace, new dispatches and timers together. Messages leave only after
that commit, so a worker killed at any instant loses nothing: an uncommitted step is
recomputed from the last commit, and a message lost between commit and publish is re-sent
by the sweeper.

Where things live:
- runs.py: what the apps ask: create_run, cancel, retry, drive.
- inbox.py: the inbox of events (submit, lock_and_take).
- step.py: the step (advance, apply_events, commit_step).
- attempts.py: step attempts, so a step that kills its worker fails its run.
- outbox.py: the outbox of dispatches (record, publish, claim).
- results.py: running claimed actions and recording their results (run_actions).
- timers.py: timer rows, near timers sent with a countdown, firing.
- sweep.py: the safety net (due timers, lost messages, unapplied events).
- state_cache.py: per-process caches of decoded graphs and committed states.
- store.py: DjangoStore, the ExecutionStore protocol on the database; part_changes.py
  and fence.py are its change log and its fenced node-row upsert.
- backends/: everything that differs between PostgreSQL and SQLite, one object each.
- transport.py: how messages leave (Celery's is registered by engine.apps).
- observers.py: the run-observer hook the apps above register on (approvals).
- clock.py: the runtime's clock (the wall clock unless a test sets another).
- leases.py: worker leases (which processes are alive), and writes left to the next beat.
- records.py: the rows passed between these parts.
"""
