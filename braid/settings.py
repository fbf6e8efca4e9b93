"""Django settings for Braid, read from the environment with embedded defaults."""

import datetime as dt
import os
import secrets
import tempfile
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from django.utils.csp import CSP

from braid.sso.config import django_settings, read_sso_config  # parsing only: no models, no I/O
from engine.egress import Allowlist  # parsing only: no Django, no I/O

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("BRAID_VAR_DIR", BASE_DIR / "var"))


def env_flag(name: str, default: bool) -> bool:
    """Return the boolean value of an environment variable such as 1/0, true/false."""
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: list[str]) -> list[str]:
    """Return a comma-separated environment variable as a list."""
    value = os.environ.get(name, "")
    return [item.strip() for item in value.split(",") if item.strip()] or default


def local_secret_key(path: Path) -> str:
    """Return the key kept in var/ for this checkout, creating it (mode 0600) once.

    A deployment sets DJANGO_SECRET_KEY; `make run` and the tests need no set-up, yet
    never share a key that is written in the source. Processes that start together on a
    fresh checkout (a Procfile's web and workers) agree on one key: the key is written
    whole to a file of its own first, then linked to its name, which only one of them
    can do (a process that read the name between another's create and write found it
    empty and refused to start).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        key = secrets.token_urlsafe(50)
        descriptor, written = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}-")
        try:
            with os.fdopen(descriptor, "w") as file:
                file.write(key + "\n")
            os.link(written, path)
            return key
        except FileExistsError:
            pass  # another process linked its key first: use that one
        except OSError:  # a file system without hard links: create the name itself
            if created_once(path, key):
                return key
        finally:
            os.unlink(written)
    key = path.read_text().strip()
    if len(key) < 50:
        raise ImproperlyConfigured(f"{path} holds no usable key; delete it")
    return key


def created_once(path: Path, key: str) -> bool:
    """Create the key file exclusively with the key in it; return False when another
    process created it first (its key is then read and checked like any stored one)."""
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return False
    with os.fdopen(descriptor, "w") as file:
        file.write(key + "\n")
    return True


# DEBUG is off unless DJANGO_DEBUG=1: with it on, a 404 lists every URL pattern and an
# error page shows settings and source. `make run` keeps it off too.
DEBUG = env_flag("DJANGO_DEBUG", False)
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "") or local_secret_key(VAR_DIR / "secret-key")

ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "channels",
    "django_vite",
    "drf_spectacular_sidecar",
    "axes",
    "web",
    "engine",
    "designer",
    "monitor",
    "approvals",
    "runs",
    "tokens",
    "braid",
]

MIDDLEWARE = [
    # First, so that every response carries its X-Request-ID, redirects and 413s included.
    "web.request_ids.RequestIdMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # Outside ApiErrorsMiddleware, so that the answers it makes itself (the API's JSON 404
    # and 413) carry the frame denial and the CSP too (they did not).
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "web.api_errors.ApiErrorsMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "web.auth.LoginRequiredMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "axes.middleware.AxesMiddleware",
]

# Content-Security-Policy on every response, from Django's own middleware (Django 6 took
# django-csp's role, so no extra package): no inline script or style anywhere, nothing from
# another origin. 'self' covers the same origin's ws:/wss: for the live pages.
SECURE_CSP: dict[str, list[str]] = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:"],
    "font-src": [CSP.SELF, "data:"],
    "connect-src": [CSP.SELF],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.SELF],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
}

# Login throttling (django-axes): after AXES_FAILURE_LIMIT failed logins for one user name
# from one address, that pair is locked out for AXES_COOLOFF_TIME, on the login page and
# the API's Basic auth alike; `python manage.py axes_reset` (or the admin) unlocks early.
# docs/permissions.md explains it.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = int(os.environ.get("BRAID_LOGIN_FAILURE_LIMIT", "5"))
AXES_COOLOFF_TIME = dt.timedelta(minutes=int(os.environ.get("BRAID_LOGIN_LOCKOUT_MINUTES", "15")))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "braid.lockout.locked_out"
AXES_USERNAME_CALLABLE = "braid.lockout.attempted_username"
AXES_VERBOSE = False
# Single sign-on's callback is not counted: the identity provider checked the password and
# throttles its own logins, and a failed callback names no user, so counting it would lock
# every person behind one address (an office's NAT) out of single sign-on.
AXES_WHITELIST_CALLABLE = "braid.lockout.single_sign_on"

# Single sign-on with OpenID Connect (docs/sso.md): off, with no route, no button and no
# backend, unless BRAID_OIDC_ISSUER, BRAID_OIDC_CLIENT_ID and BRAID_OIDC_CLIENT_SECRET are
# set. A mistake in a BRAID_OIDC_* variable stops start-up with its name; the provider itself
# is first contacted at the first single sign-on, so its being down never stops start-up.
BRAID_SSO = read_sso_config(os.environ)
if BRAID_SSO is not None:
    globals().update(django_settings(BRAID_SSO, AUTHENTICATION_BACKENDS, SECURE_CSP))

ROOT_URLCONF = "braid.urls"
ASGI_APPLICATION = "braid.asgi.application"
WSGI_APPLICATION = None

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "braid.context.navigation",
            ],
        },
    },
]

# SQLite by default; DATABASE_URL (e.g. postgres://host/db) selects PostgreSQL for scaled mode.
# Connections are kept for a minute and checked before reuse: a fork of 1,000 opened 2,006
# PostgreSQL sessions when every task connected anew (see braid/celery.py for workers).
DATABASES = {
    "default": dj_database_url.config(
        default=f"sqlite:///{VAR_DIR / 'braid.sqlite3'}",
        conn_max_age=int(os.environ.get("BRAID_DB_CONN_MAX_AGE", "60")),
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL lets the embedded worker thread write while pages read; the timeout rides out locks.
    DATABASES["default"]["OPTIONS"] = {
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "transaction_mode": "IMMEDIATE",
        "timeout": 20,
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# A 5,000-node graph (the validator's limit) is ~1-2 MB of JSON; refuse far larger bodies.
DATA_UPLOAD_MAX_MEMORY_SIZE = 8 * 1024 * 1024

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = VAR_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True
DJANGO_VITE = {
    "default": {
        "dev_mode": False,
        "static_url_prefix": "dist",
        "manifest_path": BASE_DIR / "static/dist/.vite/manifest.json",
    }
}

REST_FRAMEWORK = {
    # The token first: a request that names one is judged by it alone (tokens/authentication.py).
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "tokens.authentication.BearerTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
        "braid.lockout.ThrottledBasicAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PARSER_CLASSES": ["web.documents.StrictJSONParser"],
    "DEFAULT_PAGINATION_CLASS": "web.api_errors.StrictLimitOffsetPagination",
    "EXCEPTION_HANDLER": "web.api_errors.handle_exception",
    "PAGE_SIZE": 50,
}
# How many unrevoked API tokens one person may hold (docs/tokens.md).
BRAID_TOKENS_PER_USER = int(os.environ.get("BRAID_TOKENS_PER_USER", "100"))
SPECTACULAR_SETTINGS = {
    "TITLE": "Braid API",
    "DESCRIPTION": "Flows that fork, gather and pause for people.",
    "VERSION": "1",
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Several components have a `status`: name each set of choices once.
    "ENUM_NAME_OVERRIDES": {
        "RunStatusEnum": ["running", "waiting", "completed", "failed", "cancelled"],
        "RowStatusEnum": ["running", "waiting", "completed", "failed"],
    },
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "web.schema.add_error_responses",
    ],
}

# Without REDIS_URL everything runs in one process: an in-memory broker served by an
# embedded worker thread, and the in-memory channel layer. With it, Celery and Channels
# both go through Redis, so any number of Daphne and worker processes cooperate.
REDIS_URL = os.environ.get("REDIS_URL", "")
BRAID_EMBEDDED_WORKER = not REDIS_URL
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            # redis-py 8 reads with a 5 s socket timeout by default, which ends the layer's
            # blocking BZPOPMIN and with it every idle websocket: no client-side timeout.
            "CONFIG": {"hosts": [{"address": REDIS_URL, "socket_timeout": None}]},
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

# The only destinations the built-in http.request action may connect to; empty: none.
# Entries are names, addresses or networks, each with an optional port (`api.example.com`,
# `127.0.0.1:8000`, `[::1]:8080`, `10.0.0.0/8:443`); without one, ports 80 and 443. A listed
# name that resolves to an internal address needs that address listed too, on that port
# (engine/egress.py, docs/security.md "Egress").
BRAID_HTTP_ALLOWLIST = env_list("BRAID_HTTP_ALLOWLIST", [])
try:
    Allowlist.parse(BRAID_HTTP_ALLOWLIST)
except ValueError as unreadable:
    raise ImproperlyConfigured(f"BRAID_HTTP_ALLOWLIST: {unreadable}") from unreadable
# The most an http.request may send as its body, and read back as its reply (a larger one
# fails the node, not the worker).
BRAID_HTTP_MAX_REQUEST_BYTES = int(os.environ.get("BRAID_HTTP_MAX_REQUEST_BYTES", "1000000"))
BRAID_HTTP_MAX_RESPONSE_BYTES = int(os.environ.get("BRAID_HTTP_MAX_RESPONSE_BYTES", "10000000"))
# The longest one http.request may take in all: connecting, sending, every redirect and
# reading the whole reply (a `timeout_s` param may shorten it, never lengthen it).
BRAID_HTTP_TIMEOUT_S = float(os.environ.get("BRAID_HTTP_TIMEOUT_S", "30"))
BRAID_PYTHON_ACTIONS = env_list("BRAID_PYTHON_ACTIONS", [])

# The longest a single task may run; the broker's visibility timeout must exceed it.
BRAID_TASK_TIME_LIMIT_S = int(os.environ.get("BRAID_TASK_TIME_LIMIT_S", "900"))

# Limits on CEL expressions (engine/core/expression_limits.py; docs/expressions.md has the
# measurements): past the length and depth limits the native parser overflows its stack,
# and risky expressions (comprehensions, long concatenations) are evaluated in a sandbox
# process under the time, memory and result-size budget.
BRAID_CEL_LIMITS = {
    "max_length": int(os.environ.get("BRAID_CEL_MAX_LENGTH", "10000")),
    "max_depth": int(os.environ.get("BRAID_CEL_MAX_DEPTH", "250")),
    "max_comprehension_depth": int(os.environ.get("BRAID_CEL_MAX_COMPREHENSION_DEPTH", "3")),
    "max_literal_items": int(os.environ.get("BRAID_CEL_MAX_LITERAL_ITEMS", "1000")),
    "timeout_s": float(os.environ.get("BRAID_CEL_TIMEOUT_S", "1.0")),
    "memory_mb": int(os.environ.get("BRAID_CEL_MEMORY_MB", "512")),
    "max_result_bytes": int(os.environ.get("BRAID_CEL_MAX_RESULT_BYTES", "1000000")),
    # A foreach over more items fails with the reason (its barrier is in every step's write).
    "max_foreach_items": int(os.environ.get("BRAID_FOREACH_MAX_ITEMS", "10000")),
    # A state value or action output nested deeper fails its node (recursion near 450).
    "max_value_depth": int(os.environ.get("BRAID_VALUE_MAX_DEPTH", "100")),
}

# Bounded work (docs/security.md "Bounded work"): what one run may store and do, whatever
# its flow says. Applied to the core with BRAID_CEL_LIMITS (engine.core.expression_limits).
BRAID_RUN_LIMITS = {
    # The JSON of one written value (state write, task params or output, subflow input,
    # foreach items) and of any one state field after a write or merge.
    "max_value_bytes": int(os.environ.get("BRAID_VALUE_MAX_BYTES", "1000000")),
    # The JSON of a lineage's whole state (the sum over its fields).
    "max_state_bytes": int(os.environ.get("BRAID_STATE_MAX_BYTES", "16000000")),
    # An approval's interpolated title, its instructions, its shown values; a comment.
    "max_approval_text_bytes": int(os.environ.get("BRAID_APPROVAL_TEXT_MAX_BYTES", "10000")),
    # Iterations of any loop (a larger literal max_iterations does not validate).
    "max_loop_iterations": int(os.environ.get("BRAID_LOOP_MAX_ITERATIONS", "10000")),
    # Subflow calls nested inside one another.
    "max_subflow_depth": int(os.environ.get("BRAID_SUBFLOW_MAX_DEPTH", "8")),
    # Node executions in one run, every subflow included; past it the run fails.
    "max_run_steps": int(os.environ.get("BRAID_RUN_MAX_STEPS", "250000")),
}

# The designer's test runs (runs/test_runs.py): a separate process each, at most this many
# at once (the rest queue), each killed past its wall time, and held to its own step budget.
BRAID_TEST_RUN_WORKERS = int(os.environ.get("BRAID_TEST_RUN_WORKERS", "2"))
BRAID_TEST_RUN_TIMEOUT_S = float(os.environ.get("BRAID_TEST_RUN_TIMEOUT_S", "10"))
BRAID_TEST_RUN_MAX_STEPS = int(os.environ.get("BRAID_TEST_RUN_MAX_STEPS", "10000"))

# A step that killed its worker process this many times fails its run with the reason,
# instead of being redelivered and resumed forever (engine.runtime.attempts.begin_step).
BRAID_STEP_MAX_ATTEMPTS = int(os.environ.get("BRAID_STEP_MAX_ATTEMPTS", "3"))

# Live push to the monitor's sockets after each committed step (engine/live.py). Off only
# to measure what it costs (bench.monitor).
BRAID_LIVE = env_flag("BRAID_LIVE", True)

CELERY_BROKER_URL = REDIS_URL or "memory://"
CELERY_RESULT_BACKEND = None
# Orchestration tasks must never be lost: acknowledge a message only after its task
# finished, so a worker that dies mid-task leaves the message to be redelivered. (Early
# acks with the thread pool and worker_disable_prefetch below were measured on 2026-12-07:
# W3 fell from ~123 to ~10 runs/s, starts waiting 9.5 s. Celery 5.7's consumer stops
# reading while its slots are full; a late ack, sent through its event loop as a task
# ends, is what wakes it to read again.)
CELERY_TASK_ACKS_LATE = True
# ...and when the worker process is killed (SIGKILL, OOM), reject the message so the
# broker requeues it at once instead of treating the lost task as done.
CELERY_TASK_REJECT_ON_WORKER_LOST = True
# A worker reserves one message at a time: a long action must not hold ready runs hostage
# in its prefetch buffer while other workers sit idle.
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# ...and over Redis holds no more messages than it has pool processes free to run them: a
# message held unstarted by a worker that is then killed waits for BRAID_SWEEP_STALE_S.
CELERY_WORKER_DISABLE_PREFETCH = bool(REDIS_URL)
# Redis redelivers an unacknowledged message after the visibility timeout; it must be
# longer than any task (hard limit below) or a slow task would run twice concurrently.
CELERY_TASK_TIME_LIMIT = BRAID_TASK_TIME_LIMIT_S
CELERY_TASK_SOFT_TIME_LIMIT = BRAID_TASK_TIME_LIMIT_S - 30
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": BRAID_TASK_TIME_LIMIT_S * 4,
    # kombu's default polling makes the in-memory broker run ~8 tasks/s; 5 ms gives ~500/s.
    "polling_interval": 0.005,
}
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Timers due sooner than this get a Celery countdown too; later ones wait for the sweeper,
# so no ETA ever outlives the visibility timeout (Redis would redeliver it meanwhile).
BRAID_TIMER_ETA_LIMIT_S = min(300, BRAID_TASK_TIME_LIMIT_S)
BRAID_SWEEP_INTERVAL_S = float(os.environ.get("BRAID_SWEEP_INTERVAL_S", "5"))
# An action that no worker claimed this long after it was sent is sent again: its message
# vanished with a worker that had reserved it (at-least-once; a backlog only costs a
# duplicate message that finds the action done).
BRAID_SWEEP_STALE_S = float(os.environ.get("BRAID_SWEEP_STALE_S", "30"))
# Each process that runs actions beats its lease this often; an action claimed by a
# process silent for BRAID_LEASE_DEAD_S is sent again at the next sweep (engine/runtime/leases.py).
BRAID_LEASE_BEAT_S = float(os.environ.get("BRAID_LEASE_BEAT_S", "2"))
BRAID_LEASE_DEAD_S = float(os.environ.get("BRAID_LEASE_DEAD_S", "8"))
# The engine's statements on PostgreSQL (a step's lock and writes, node rows, claims,
# results) are prepared statements, planned once per connection; turn this off behind a
# connection pooler in transaction mode, such as PgBouncer's.
BRAID_PREPARED_WRITES = env_flag("BRAID_PREPARED_WRITES", True)
if BRAID_PREPARED_WRITES and DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # Django turns psycopg's statement preparation off (prepare_threshold None), which
    # makes the engine's prepare=True a no-op: every step's statements were parsed and
    # planned anew, about 2 ms of server time a hop. A threshold no query reaches keeps
    # the ORM's statements unprepared, as before; the engine's are prepared at first use.
    DATABASES["default"].setdefault("OPTIONS", {}).setdefault("prepare_threshold", 2**31 - 1)
# A step's actions leave as at most this many messages: one each for a narrow fan-out,
# contiguous chunks for a wide one (a broker round trip per action dominated a fork of
# 1,000)...
BRAID_DISPATCH_STREAMS = int(os.environ.get("BRAID_DISPATCH_STREAMS", "32"))
# ...and at most this many per task slot of the live workers (their leases say how many):
# enough that no slot idles while another works through a slow chunk, few enough that a
# chunk's claim, results and step are paid rarely (a fork of 1,000 on two workers of two
# processes: 32 chunks took 444 ms, 8 took 347-365 ms). 0 turns the limit off.
BRAID_STREAMS_PER_SLOT = int(os.environ.get("BRAID_STREAMS_PER_SLOT", "2"))
# A chunk's results are recorded together, at least this often, in one transaction.
BRAID_RESULT_FLUSH_S = float(os.environ.get("BRAID_RESULT_FLUSH_S", "0.05"))
# An action task out of work runs the next action of its run itself, without a message,
# up to this many per task (a chain then costs no broker round trip per node).
BRAID_INLINE_ACTIONS = int(os.environ.get("BRAID_INLINE_ACTIONS", "100"))
# Threads that serve HTTP requests in a web process (braid.http): each keeps its database
# connection; a request past them waits for one to be free.
BRAID_HTTP_THREADS = int(os.environ.get("BRAID_HTTP_THREADS", "8"))
# `braid decide` on a durable run waits this long for a worker to apply the decision.
BRAID_DECIDE_WAIT_S = float(os.environ.get("BRAID_DECIDE_WAIT_S", "5"))
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
CELERY_BEAT_SCHEDULE = {
    "sweep": {"task": "braid.sweep", "schedule": BRAID_SWEEP_INTERVAL_S},
}
CELERY_TASK_IGNORE_RESULT = True
# Celery's Django fix-up would close every database connection around every task; reuse
# them instead, closing only broken or expired ones (braid/celery.py, CONN_MAX_AGE above).
CELERY_DB_REUSE_MAX = 1_000_000
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
# Tasks are published with delay_on_commit() (see braid/celery.py), so a worker never
# receives a message about rows its producer has not committed yet.

# Database sessions that ignore a cookie no session key can be (braid/sessions.py).
SESSION_ENGINE = "braid.sessions"
SESSION_COOKIE_HTTPONLY = True
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
# Behind TLS, as every deployment should be: secure cookies, the HTTPS redirect and HSTS.
# On by default whenever DEBUG is off; the plain-http arrangements on 127.0.0.1 (`make run`,
# `make run-scaled`, the tests) set DJANGO_HTTPS=0.
HTTPS = env_flag("DJANGO_HTTPS", not DEBUG)
if HTTPS:
    SESSION_COOKIE_SECURE = env_flag("DJANGO_SECURE_COOKIES", True)
    CSRF_COOKIE_SECURE = env_flag("DJANGO_SECURE_COOKIES", True)
    SECURE_SSL_REDIRECT = env_flag("DJANGO_SECURE_SSL_REDIRECT", True)
    SECURE_HSTS_SECONDS = int(os.environ.get("DJANGO_HSTS_SECONDS", "31536000"))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env_flag("DJANGO_HSTS_INCLUDE_SUBDOMAINS", True)
    SECURE_HSTS_PRELOAD = env_flag("DJANGO_HSTS_PRELOAD", True)
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# Approval emails (approvals/notify.py), through Django's mailers. On plain http (`make
# run`) the console backend prints them; behind TLS the default is SMTP, configured by
# BRAID_EMAIL_HOST etc. (BRAID_EMAIL_BACKEND names another backend). Tests use Django's
# locmem backend. BRAID_BASE_URL makes the links in them absolute.
EMAIL_BACKEND_PATH = os.environ.get(
    "BRAID_EMAIL_BACKEND",
    "django.core.mail.backends.smtp.EmailBackend"
    if HTTPS
    else "django.core.mail.backends.console.EmailBackend",
)
SMTP_OPTIONS = {
    "host": os.environ.get("BRAID_EMAIL_HOST", "localhost"),
    "port": int(os.environ.get("BRAID_EMAIL_PORT", "25")),
    "username": os.environ.get("BRAID_EMAIL_USER", ""),
    "password": os.environ.get("BRAID_EMAIL_PASSWORD", ""),
    "use_tls": env_flag("BRAID_EMAIL_TLS", False),
    "timeout": 10,  # seconds: a slow mail server delays a worker by at most this per email
}
MAILERS = {
    "default": {
        "BACKEND": EMAIL_BACKEND_PATH,
        "OPTIONS": SMTP_OPTIONS if EMAIL_BACKEND_PATH.endswith("smtp.EmailBackend") else {},
    }
}
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "Braid <braid@localhost>")
BRAID_BASE_URL = os.environ.get("BRAID_BASE_URL", "http://127.0.0.1:8000")

# Logs: plain text by default; BRAID_LOG_FORMAT=json writes one JSON object a line, with the
# run id, the node and the request id where they apply (engine/log_context.py sets them on
# every record; docs/operations.md).
BRAID_LOG_FORMAT = os.environ.get("BRAID_LOG_FORMAT", "").strip().lower() or "text"
if BRAID_LOG_FORMAT not in ("text", "json"):
    raise ImproperlyConfigured(f"BRAID_LOG_FORMAT is text or json, not {BRAID_LOG_FORMAT!r}")
LOG_FORMATTERS = {
    "json": {
        "()": "pythonjsonlogger.json.JsonFormatter",
        "fmt": "%(levelname)s %(name)s %(message)s",
        "rename_fields": {"levelname": "level", "name": "logger"},
        "timestamp": "time",
    }
}
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"context": {"()": "engine.log_context.ContextFilter"}},
    "formatters": LOG_FORMATTERS if BRAID_LOG_FORMAT == "json" else {},
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "filters": ["context"],
            **({"formatter": "json"} if BRAID_LOG_FORMAT == "json" else {}),
        }
    },
    "root": {"handlers": ["console"], "level": os.environ.get("BRAID_LOG_LEVEL", "INFO")},
}

# /metrics (braid/metrics.py, docs/operations.md): off (404) unless one of these is set.
# With the token, a scrape must send `Authorization: Bearer <token>`; BRAID_METRICS_OPEN=1
# without a token serves anyone (for a network closed some other way).
BRAID_METRICS_TOKEN = os.environ.get("BRAID_METRICS_TOKEN", "").strip()
if BRAID_METRICS_TOKEN and len(BRAID_METRICS_TOKEN) < 16:
    raise ImproperlyConfigured("BRAID_METRICS_TOKEN must be at least 16 characters long")
BRAID_METRICS_OPEN = env_flag("BRAID_METRICS_OPEN", False)

STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # also creates VAR_DIR
