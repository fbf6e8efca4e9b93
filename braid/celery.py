"""The Celery app: `celery -A braid worker` in scaled mode, an embedded thread otherwise."""

import gc
import logging
import os
from collections.abc import Iterator, Mapping
from typing import Any

from celery import Celery
from celery.signals import (
    task_postrun,
    task_prerun,
    worker_init,
    worker_process_init,
    worker_process_shutdown,
    worker_ready,
)

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "braid.settings")
logger = logging.getLogger(__name__)


class CelerySettings(Mapping[str, Any]):
    """Django's CELERY_* settings, copied into a dict when Celery first reads its
    configuration (as reading `django.conf:settings` did, no sooner).

    Celery looks settings up on every message it sends (seven lookups an `apply_async`),
    each under two names in each of its maps, and through Django's LazySettings a name it
    lacks is an AttributeError: about 0.12 ms of a message's 0.55 ms of CPU. A dict's miss
    costs next to nothing. A setting changed at run time would not reach Celery; none is.
    """

    def __init__(self) -> None:
        self.copied: dict[str, Any] | None = None

    def settings(self) -> dict[str, Any]:
        if self.copied is None:
            from django.conf import settings

            self.copied = {name: getattr(settings, name) for name in dir(settings)
                           if name.startswith("CELERY_")}  # fmt: skip
        return self.copied

    def __getitem__(self, name: str) -> Any:
        return self.settings()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.settings())

    def __len__(self) -> int:
        return len(self.settings())


app = Celery("braid")
# Every CELERY_* setting in braid/settings.py, with its reason there. Under Django, Celery
# uses celery.contrib.django.task.DjangoTask, whose delay_on_commit() publishes only after
# the surrounding transaction commits.
app.config_from_object(CelerySettings(), namespace="CELERY")
app.autodiscover_tasks()


@task_prerun.connect
def before_task(**_: Any) -> None:
    """Drop broken or expired connections, and make sure this process beats its lease."""
    from django.db import close_old_connections

    from engine.runtime import leases

    close_old_connections()
    leases.start_beating()


@task_postrun.connect
def after_task(**_: Any) -> None:
    """Keep the connection for the next task unless it broke or expired (CONN_MAX_AGE)."""
    from django.db import close_old_connections

    close_old_connections()


@worker_init.connect
def note_capacity(sender: Any, **_: Any) -> None:
    """Tell the leases which worker this is and how many tasks it runs at once, before a
    prefork worker forks its pool (its processes inherit it); engine.runtime.outbox sizes the
    chunks of a wide fan-out by it."""
    from engine.runtime import leases

    leases.set_capacity(sender.hostname, worker_slots(sender))


def worker_slots(worker: Any) -> int:
    """How many tasks a worker runs at once: its concurrency, or its --autoscale maximum
    (the option is parsed after worker_init, so it may still be the text "MAX,MIN")."""
    autoscale = getattr(worker, "autoscale", None) or getattr(worker, "options", {}).get(
        "autoscale"
    )
    if isinstance(autoscale, str):
        autoscale = [int(n) for n in autoscale.split(",") if n.strip()]
    if autoscale:
        return max(int(n) for n in autoscale)
    concurrency = worker.concurrency
    # "auto" is resolved after this signal, to the CPU count.
    return concurrency if isinstance(concurrency, int) else os.cpu_count() or 1


@worker_process_init.connect
@worker_ready.connect
def freeze_startup_objects(**_: Any) -> None:
    """Keep what a worker process starts with (Django, Celery, the app: about 160,000
    objects) out of the cyclic garbage collector's passes: in each prefork pool process as
    it starts, and in the worker itself once it is ready, where the thread pool (the
    Procfile's) runs its tasks; worker_process_init fires only in pool processes.

    A step allocates tens of thousands of objects (a fork of 1,000: its frames, lineages
    and commands), so collections run during it, and a full one walked every object of
    the process: up to 110 ms more for such a step. Frozen objects are never collected,
    which costs nothing for objects that live as long as the process (docs/durable.md,
    "Measured").
    """
    gc.freeze()
    logger.info("froze %d start-up objects out of the garbage collector's passes",
                gc.get_freeze_count())  # fmt: skip


@worker_process_shutdown.connect
def forget_live_gauges(**_: Any) -> None:
    """A pool process that ends drops its live gauges from PROMETHEUS_MULTIPROC_DIR (its
    counters stay, summed into the host's totals by /metrics)."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(os.getpid())
