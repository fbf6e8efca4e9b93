"""The pure engine core: no Django, Celery or Channels, and no I/O."""
