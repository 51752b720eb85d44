"""Settings, read from the environment.

The defaults give the embedded development setup (SQLite and a file-backed broker under var/),
whose secret key `./studio up` keeps in var/studio.env. The full stack sets DATABASE_URL and
REDIS_URL; docs/manual.md (Configuration) lists every variable. Malformed values fail loudly at
start-up rather than falling back silently.
"""

from __future__ import annotations

import ipaddress
import logging
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.utils.csp import CSP
from environs import Env, validate

BASE_DIR = Path(__file__).resolve().parent.parent

env = Env()
env.read_env(BASE_DIR / ".env", recurse=False)

VAR_DIR = env.path("VAR_DIR", default=BASE_DIR / "var")
# What `./studio up` writes for the embedded studio (a random secret key, made on its first
# start), so that its web server, its worker and every command typed in this checkout run with
# the same settings and nothing exported. The environment and .env win over it.
EMBEDDED_SETTINGS_FILE = VAR_DIR / "studio.env"
env.read_env(EMBEDDED_SETTINGS_FILE, recurse=False)

DEBUG = env.bool("DEBUG", default=False)

# No working default anywhere, not even in development: a deployment that forgets the key must
# not start, and a known development key would sign sessions of any studio left running with it.
SECRET_KEY = env.str("SECRET_KEY", default="")
if not SECRET_KEY:
    raise ImproperlyConfigured(
        "SECRET_KEY must be set, in the environment or in .env; for the embedded studio, "
        f"./studio up keeps one in {EMBEDDED_SETTINGS_FILE}."
    )

ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1"])
CSRF_TRUSTED_ORIGINS: list[str] = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    # The record list's full-text search on PostgreSQL (curation.selectors).
    "django.contrib.postgres",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "axes",
    # The domains, each on the ones before it (see docs/architecture.md).
    "curation",
    "annotation",
    "authoring",
    "judging",
    "review",
    "reports",
    "alignment",
    "hub",
    "releases",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "config.middleware.PrivateAnswersMiddleware",
    "django.contrib.auth.middleware.LoginRequiredMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Last, as its documentation asks: it turns a refused login into the lock-out page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

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
            ],
        },
    },
]

DATABASES = {
    "default": env.dj_db_url(
        "DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'studio.sqlite3'}", conn_max_age=60
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The web server and the worker write to the same file: WAL lets readers run beside the
    # writer, IMMEDIATE takes the write lock up front instead of failing halfway through.
    # Connections are kept (CONN_MAX_AGE, one a thread of gunicorn's): the last connection to
    # close checkpoints the log into the database and deletes it, which with a connection a
    # request cost each request about 5 ms (docs/benchmarks.md, "Where the time goes").
    DATABASES["default"]["OPTIONS"] = {
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "transaction_mode": "IMMEDIATE",
        "timeout": 30,
    }
else:
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
# A connection is kept for CONN_MAX_AGE by the thread that opened it, which is bounded where
# threads are reused: gunicorn's (processes x threads) and Celery's processes. Django's
# development server (`manage.py runserver`) serves each request on a new thread, whose kept
# connection then stays open, idle, until garbage collection finds it (51 after 60 requests
# 20 at a time; 79 of PostgreSQL's 100 in a review). There, every request closes its own.
if sys.argv[1:2] == ["runserver"]:
    DATABASES["default"]["CONN_MAX_AGE"] = 0

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# The annotation queue's index includes the counts it orders by (curation.Record) for PostgreSQL's
# index-only counts; SQLite, which has no such columns, builds it without them, as is fine.
SILENCED_SYSTEM_CHECKS = ["models.W040"]

REDIS_URL = env.str("REDIS_URL", default="")

CACHES: dict[str, dict[str, Any]]
if REDIS_URL:
    CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}
    }
else:
    # Shared between the web server and the embedded worker, unlike the in-memory cache.
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": VAR_DIR / "cache",
        }
    }

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# Every login (the studio's and the admin's) goes through django-axes first, which records the
# failures; curation.login_throttle decides from them how long a login waits (a username from
# one address, an address, a username from anywhere: see there).
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_HANDLER = "curation.login_throttle.LoginThrottle"
AXES_FAILURE_LIMIT = env.int("LOGIN_FAILURE_LIMIT", default=5, validate=validate.Range(min=1))
# Failures from one address, whatever the usernames: more than one person's typos (an office
# behind one NAT), far fewer than a password sprayed over every username.
LOGIN_ADDRESS_FAILURE_LIMIT = env.int(
    "LOGIN_ADDRESS_FAILURE_LIMIT", default=20, validate=validate.Range(min=1)
)
# The longest a username's delay grows to: a username is slowed down, never locked.
LOGIN_USERNAME_DELAY_MAX_SECONDS = env.int(
    "LOGIN_USERNAME_DELAY_MAX_SECONDS", default=60, validate=validate.Range(min=1)
)
AXES_COOLOFF_TIME = timedelta(
    minutes=env.int("LOGIN_COOLOFF_MINUTES", default=15, validate=validate.Range(min=1))
)
# axes' own count, of a username from one address, which locks at the failure that reaches the
# limit; the others are curation.login_throttle's.
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
# A refused login is not counted: repeating it must not prolong a lock-out or a username's delay.
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
# The connection's address, or the client's that the proxies declared here forwarded for. Both
# off by default: a header read from anyone else would let a client choose its address.
AXES_CLIENT_IP_CALLABLE = "curation.login_throttle.client_address"
TRUSTED_PROXY_COUNT = env.int("TRUSTED_PROXY_COUNT", default=0, validate=validate.Range(min=0))
TRUSTED_PROXY_ADDRESSES: list[str] = env.list("TRUSTED_PROXY_ADDRESSES", default=[])
for _network in TRUSTED_PROXY_ADDRESSES:
    try:
        ipaddress.ip_network(_network, strict=False)
    except ValueError as _error:
        raise ImproperlyConfigured(
            f"TRUSTED_PROXY_ADDRESSES: {_network!r} is no address or network ({_error})."
        ) from None
if TRUSTED_PROXY_COUNT and TRUSTED_PROXY_ADDRESSES:
    raise ImproperlyConfigured(
        "Set TRUSTED_PROXY_COUNT or TRUSTED_PROXY_ADDRESSES, not both: the addresses already "
        "say which proxies to trust."
    )
# Our own page, the same whether or not the username exists; axes' own answer to an XHR would
# allow every origin to read it.
AXES_LOCKOUT_CALLABLE = "curation.views.accounts.locked_out"
# Not its banner at every start of every command and worker.
AXES_VERBOSE = False

# API tokens expire after this many days; their owners make new ones on the account page.
API_TOKEN_LIFETIME_DAYS = env.int(
    "API_TOKEN_LIFETIME_DAYS", default=90, validate=validate.Range(min=1)
)
# How long a manager's invitation link to their project stays usable.
INVITATION_LIFETIME_DAYS = env.int(
    "INVITATION_LIFETIME_DAYS", default=7, validate=validate.Range(min=1)
)

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = env.str("TIME_ZONE", default="UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = env.path("STATIC_ROOT", default=BASE_DIR / "staticfiles")
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
}
# Uploads (import files, reference files) live outside the web root and are only ever served
# by views that check permissions; there is deliberately no MEDIA_URL route.
MEDIA_ROOT = env.path("MEDIA_ROOT", default=VAR_DIR / "media")

# Import limits: a single uploaded or unpacked file, and a whole zip once unpacked.
IMPORT_MAX_FILE_BYTES = env.int("IMPORT_MAX_FILE_BYTES", default=200 * 1024 * 1024)
IMPORT_MAX_UNPACKED_BYTES = env.int("IMPORT_MAX_UNPACKED_BYTES", default=1024 * 1024 * 1024)
# How long the upload of a successful import is kept: 0 removes it once its records are stored
# (they hold all it said); later imports remove those older than this.
IMPORT_UPLOADS_KEPT_DAYS = env.int("IMPORT_UPLOADS_KEPT_DAYS", default=0)
# Entries in an uploaded zip: a zip of millions of empty files is a bomb of another kind.
IMPORT_MAX_ZIP_ENTRIES = env.int("IMPORT_MAX_ZIP_ENTRIES", default=10_000)
# Reference files of benchmark tasks: the largest accepted, and the kinds accepted (by extension,
# and checked against the content; authoring/reference_files.py knows how to check these).
TASK_FILE_MAX_BYTES = env.int("TASK_FILE_MAX_BYTES", default=10 * 1024 * 1024)
_CHECKED_TASK_FILE_TYPES = ["pdf", "txt", "md", "csv", "json", "png", "jpg", "jpeg", "docx", "xlsx"]
TASK_FILE_TYPES = [
    extension.lower().lstrip(".")
    for extension in env.list("TASK_FILE_TYPES", default=_CHECKED_TASK_FILE_TYPES)
]
if not set(TASK_FILE_TYPES) <= set(_CHECKED_TASK_FILE_TYPES):
    raise ImproperlyConfigured(
        f"TASK_FILE_TYPES may only name {', '.join(_CHECKED_TASK_FILE_TYPES)}; "
        f"got {', '.join(sorted(set(TASK_FILE_TYPES) - set(_CHECKED_TASK_FILE_TYPES)))}."
    )
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024

# A strict policy: nothing inline, nothing from elsewhere. Record content is hostile.
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:"],
    "font-src": [CSP.SELF],
    "connect-src": [CSP.SELF],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.NONE],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
}
# Error pages and reports show the traceback and the request's headers, never the environment
# or the settings, whose URLs carry passwords.
DEFAULT_EXCEPTION_REPORTER_FILTER = "config.error_reports.TracebackOnlyFilter"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False  # htmx reads the token from the body's hx-headers, not the cookie
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=not DEBUG)
# Container and load-balancer health checks call the app directly over plain HTTP.
SECURE_REDIRECT_EXEMPT = [r"^healthz/$"]
SESSION_COOKIE_SECURE = env.bool("SECURE_COOKIES", default=not DEBUG)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=0 if DEBUG else 3600)
# Both commit every subdomain (and, once submitted, the browsers' preload list) to HTTPS for a
# long time, so they are the deployer's decision; the production example in docs/manual.md
# turns them on.
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=False)
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=False)
SECURE_PROXY_SSL_HEADER = (
    ("HTTP_X_FORWARDED_PROTO", "https") if env.bool("BEHIND_TLS_PROXY", default=False) else None
)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "curation.authentication.ApiTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "curation.openapi.StudioAutoSchema",
    "EXCEPTION_HANDLER": "curation.api_errors.exception_handler",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Curation Studio API",
    "DESCRIPTION": "Projects, records and imports of the agent-safety curation studio.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Separate request and response components, so that an upload is a binary file in the schema
    # (Swagger UI then offers a file picker) and read-only fields are not asked for.
    "COMPONENT_SPLIT_REQUEST": True,
    # Gold labels, verdicts and final labels share one choice set: one name for it.
    # Several models name their choices State: one distinct component name for each.
    "ENUM_NAME_OVERRIDES": {
        "SafetyLabelEnum": [("safe", "Safe"), ("unsafe", "Unsafe")],
        "ImportStateEnum": "curation.models.ImportBatch.State",
        "LeaseStateEnum": "annotation.models.Lease.State",
        "TaskStateEnum": "authoring.models.Task.State",
        "JudgeRunStateEnum": "judging.models.JudgeRun.State",
        "JudgeRunSourceEnum": "judging.models.JudgeRun.Source",
        "DisagreementStateEnum": "review.models.Disagreement.State",
        "DisagreementKindEnum": "review.models.Disagreement.Kind",
        "RecordBulkActionEnum": "hub.services.BulkAction",
    },
}

# Celery: Redis on the full stack; without it, a broker on the file system that the embedded
# web server and worker share (a real broker and a real worker, not eager mode).
if REDIS_URL:
    CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default=REDIS_URL)
    CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, object] = {
        # Redis hands a message whose worker died out again after this long (seconds). Jobs do
        # not wait for it: their leases run out within JOB_STALE_SECONDS and a live worker sends
        # them again (curation/job_leases.py); the late copy finds its job finished.
        "visibility_timeout": env.int("CELERY_VISIBILITY_TIMEOUT", default=3600),
    }
else:
    # A host name, though the folders are all it uses: without one, kombu warns at every start
    # that it reverts to localhost.
    CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default="filesystem://localhost//")
    if CELERY_BROKER_URL.startswith("filesystem:"):
        # kombu's file-system transport, but a message is whole when a worker sees it
        # (config.broker).
        CELERY_BROKER_TRANSPORT = "config.broker:Transport"
    _broker_dir = VAR_DIR / "broker"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_broker_dir / "queue"),
        "data_folder_out": str(_broker_dir / "queue"),
        "control_folder": str(_broker_dir / "control"),
    }
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
# A worker process that grew past this (in MB) during a job is replaced by a fresh one after it:
# Python keeps the memory of an import, an indexing run or a release build once they end, and
# would hold hundreds of MB for the rest of the worker's life (docs/benchmarks.md, The embedded
# default). An idle worker process takes about 120 MB; the replacement costs one fork.
CELERY_WORKER_MAX_MEMORY_PER_CHILD = 1024 * env.int(
    "WORKER_MAX_MEMORY_MB", default=250, validate=validate.Range(min=100)
)

# A long job (an import, a release build, the search indexing, a connection test) whose worker
# has not renewed its lease for this long (seconds) is taken as dead, and a live worker sends it
# again; workers look for such jobs when they start and every half of this (curation/job_leases.py).
JOB_STALE_SECONDS = env.int("JOB_STALE_SECONDS", default=30, validate=validate.Range(min=2))

# logging.INFO's number: a level's name given in LOG_LEVEL is read as its number too.
LOG_LEVEL = env.log_level("LOG_LEVEL", default=logging.INFO)
LOGGING: dict[str, Any] = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    # A refused request (403, 404, any 4xx) in one line, without the traceback Django gives a
    # PermissionDenied; a 500 keeps its traceback (config/request_logging.py).
    "filters": {"refusals_in_one_line": {"()": "config.request_logging.RefusalsInOneLine"}},
    "loggers": {"django.request": {"filters": ["refusals_in_one_line"]}},
}

# Where judges' calls go, and the variable their key is read from, are model connections that
# site administrators set up in the admin (judging.models.ModelConnection), not settings.
# The most calls a judge may have in flight at once, in one worker process.
JUDGE_MAX_CONCURRENCY = env.int("JUDGE_MAX_CONCURRENCY", default=64)
# A running judge run whose workers have not written its heartbeat for this long (seconds) is
# taken as dead: a worker starting, or a manager's "resume", hands it to another worker. It is
# also the lease of a chunk of a run: one whose worker has not renewed it for this long is
# taken over by another worker.
JUDGE_RUN_STALE_SECONDS = env.int("JUDGE_RUN_STALE_SECONDS", default=60)
# A run is cut into chunks of this many records, which any worker claims one after another: the
# unit a worker that dies loses its hold on (judging/services/run_engine/).
JUDGE_RUN_CHUNK_SIZE = env.int("JUDGE_RUN_CHUNK_SIZE", default=50)
# The most workers one run spreads over: as many run_judge jobs are sent for it.
JUDGE_RUN_MAX_WORKERS = env.int("JUDGE_RUN_MAX_WORKERS", default=32)
# A connection's limits per minute may be spent in a burst of this many seconds' worth after a
# quiet spell (at least one request): see judging/limits.py.
JUDGE_LIMIT_BURST_SECONDS = env.float("JUDGE_LIMIT_BURST_SECONDS", default=1.0)
# A run whose next call would wait longer than this for its turn at the connection's limits
# steps aside: it gives its worker back and comes back when its turn is near.
JUDGE_LIMIT_PATIENCE_SECONDS = env.float("JUDGE_LIMIT_PATIENCE_SECONDS", default=10.0)
# A worker holds a judge run this long at most before it goes to the back of the queue, so that
# the jobs sent after the run (another project's run, an import) are not kept waiting.
JUDGE_RUN_SLICE_SECONDS = env.float("JUDGE_RUN_SLICE_SECONDS", default=60.0)
# Connection tests one person may start in an hour (a connection has one under way at a time).
JUDGE_CONNECTION_TESTS_PER_HOUR = env.int("JUDGE_CONNECTION_TESTS_PER_HOUR", default=20)
# The HTTP clients under the judges log every request at INFO and their internals at DEBUG;
# keep them to warnings so that a DEBUG log level does not fill the log with request details.
for _quiet in ("openai", "httpx", "httpx2", "httpcore", "httpcore2"):
    LOGGING.setdefault("loggers", {})[_quiet] = {"level": "WARNING"}
