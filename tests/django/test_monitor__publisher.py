"""The publisher's cadence: each changed run's group at every flush, the runs list's group
at most once per LIST_FLUSH_S slot of the wall clock, with every run changed since it was
last told."""

import asyncio

import pytest

from engine import live
from engine.live import LIST_FLUSH_S, Publisher, run_group

A, B, C = "0" * 31 + "a", "0" * 31 + "b", "0" * 31 + "c"


def changed(publisher: Publisher, *runs: str) -> None:
    with publisher.lock:  # what mark() records, without starting the thread
        publisher.dirty.update(runs)


def test_the_runs_list_hears_at_most_every_list_flush_with_all_runs_changed_since() -> None:
    publisher = Publisher()
    assert publisher.list_due_in(100.0) is None
    changed(publisher, B, A)
    assert publisher.take(100.0) == [
        (run_group(A), {"type": "run.changed", "run": A}),
        (run_group(B), {"type": "run.changed", "run": B}),
        (live.RUNS_GROUP, {"type": "runs.changed", "runs": [A, B]}),
    ]
    changed(publisher, C)
    assert publisher.take(100.1) == [(run_group(C), {"type": "run.changed", "run": C})]
    assert publisher.list_due_in(100.1) == pytest.approx(LIST_FLUSH_S - 0.1)
    changed(publisher, A)
    assert publisher.take(100.2) == [(run_group(A), {"type": "run.changed", "run": A})]
    assert publisher.take(100.0 + LIST_FLUSH_S) == [
        (live.RUNS_GROUP, {"type": "runs.changed", "runs": [A, C]})
    ]
    assert publisher.list_due_in(101.0) is None
    assert publisher.take(101.0) == []


def test_a_change_after_a_quiet_spell_reaches_the_runs_list_at_the_next_flush() -> None:
    publisher = Publisher()
    changed(publisher, A)
    publisher.take(100.0)
    changed(publisher, B)
    assert publisher.take(100.0 + LIST_FLUSH_S + 5) == [
        (run_group(B), {"type": "run.changed", "run": B}),
        (live.RUNS_GROUP, {"type": "runs.changed", "runs": [B]}),
    ]


def test_processes_that_told_the_list_at_different_times_tell_it_again_together() -> None:
    first, second = Publisher(), Publisher()  # two worker processes
    changed(first, A)
    changed(second, B)
    assert first.take(100.0)[-1] == (live.RUNS_GROUP, {"type": "runs.changed", "runs": [A]})
    assert second.take(100.0 + LIST_FLUSH_S * 0.6)[-1] == (
        live.RUNS_GROUP, {"type": "runs.changed", "runs": [B]},
    )  # fmt: skip
    changed(first, C)
    changed(second, C)
    now = 100.0 + LIST_FLUSH_S * 0.7
    assert [m for _, m in first.take(now) + second.take(now)] == [
        {"type": "run.changed", "run": C}, {"type": "run.changed", "run": C},
    ]  # fmt: skip
    # Both hold C for the start of the next slot, not for LIST_FLUSH_S after their last.
    assert first.list_due_in(now) == pytest.approx(LIST_FLUSH_S * 0.3)
    assert second.list_due_in(now) == pytest.approx(LIST_FLUSH_S * 0.3)
    boundary = 100.0 + LIST_FLUSH_S
    told = {"type": "runs.changed", "runs": [C]}
    assert first.take(boundary) == second.take(boundary) == [(live.RUNS_GROUP, told)]


@pytest.mark.redis
def test_only_groups_a_socket_joined_are_sent_to_on_channels_redis() -> None:
    from channels_redis.core import RedisChannelLayer

    from tests.servers import require_redis

    layer = RedisChannelLayer(hosts=[require_redis()], prefix="braid-test-publisher")
    watched, unwatched = run_group(A), run_group(B)

    async def check() -> None:
        await layer.flush()
        channel = await layer.new_channel()
        await layer.group_add(watched, channel)
        assert await live.joined_groups(layer, {watched, unwatched}) == {watched}
        await layer.group_discard(watched, channel)
        assert await live.joined_groups(layer, {watched, unwatched}) == set()
        await layer.flush()

    asyncio.run(check())


def test_every_group_counts_as_joined_on_another_layer() -> None:
    from channels.layers import InMemoryChannelLayer

    groups = {run_group(A), live.RUNS_GROUP}
    assert asyncio.run(live.joined_groups(InMemoryChannelLayer(), groups)) == groups
