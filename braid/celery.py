"""The Celery app: `celery -A braid worker` in scaled mode, an embedded thread otherwise."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "braid.settings")

app = Celery("braid")
# Every CELERY_* setting in braid/settings.py, with its reason there. Under Django, Celery
# uses celery.contrib.django.task.DjangoTask, whose delay_on_commit() publishes only after
# the surrounding transaction commits.
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
