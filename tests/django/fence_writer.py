"""A separate process racing fenced writes: `python -m tests.django.fence_writer RUN SEED`."""

import os
import random
import sys


def main() -> None:
    """Write the seed's shuffled iterations, one transaction each."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "braid.settings")
    import django

    django.setup()
    from engine.runtime.store import write_rows
    from tests.django.test_store__fenced_race import shuffled_writes

    run_id, seed = sys.argv[1], int(sys.argv[2])
    for write in shuffled_writes(random.Random(seed)):
        write_rows(run_id, [write])


if __name__ == "__main__":
    main()
