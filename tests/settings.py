"""The suite's settings: Braid's own, served over plain http as on 127.0.0.1."""

import os

os.environ.setdefault("DJANGO_HTTPS", "0")

from braid.settings import *  # noqa: F403
