"""The uncaught script errors of a Playwright page, recorded from when it is watched."""

from weakref import WeakKeyDictionary

from playwright.sync_api import Page

_errors: WeakKeyDictionary[Page, list[str]] = WeakKeyDictionary()


def watch_errors(page: Page) -> None:
    """Record each uncaught script error of `page` from now on."""
    errors = _errors.setdefault(page, [])
    page.on("pageerror", lambda error: errors.append(str(error)))


def errors_of(page: Page) -> list[str]:
    """Return the script errors recorded for `page` since it was first watched."""
    return _errors[page]
