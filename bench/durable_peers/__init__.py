"""Braid's durable runtime beside the engines its users would pick instead (issue 33).

`python -m bench.durable_peers.run [--quick]` (`make bench-peers`) measures W1-W4 on Braid in
scaled mode, Temporal, DBOS, LangGraph with a PostgreSQL saver and raw Celery with Braid's
settings, round by round, then kills a worker of each mid-run, and writes bench/PEERS.md.
Each subject's driver is its own module, run in a fresh process per round.
"""
