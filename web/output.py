"""Where the command line writes: Django's OutputWrapper under `manage.py braid`, or any
text stream (a test's StringIO). The commands need only its write()."""

from typing import Protocol


class Output(Protocol):
    """Something that takes text: a command's stdout or stderr."""

    def write(self, text: str, /) -> object:
        """Write the text as it is (each command ends its own lines)."""
        ...
