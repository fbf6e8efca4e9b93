"""Django's database sessions, ignoring a session cookie that no session key can be.

Django makes keys of 32 lowercase letters and digits, and looked up whatever the cookie
held: on PostgreSQL a cookie with a NUL was a 500 on every page, API call and socket
(psycopg refuses the parameter). Such a cookie is now treated as no session at all.
"""

from django.contrib.sessions.backends import db

SESSION_KEY_MAX = 40  # the session table's key column


class SessionStore(db.SessionStore):
    """Database sessions whose keys are ASCII letters and digits, 8 to 40 of them."""

    def _validate_session_key(self, key: str | None) -> bool:
        if not super()._validate_session_key(key):  # type: ignore[misc]  # django-stubs leaves it out
            return False
        assert key is not None
        return len(key) <= SESSION_KEY_MAX and key.isascii() and key.isalnum()
