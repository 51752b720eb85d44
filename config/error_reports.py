"""What Django's error reports show: the traceback and the request, never the environment or
the settings.

With DEBUG on (`DEBUG=true ./studio up`, say), Django's error page lists request.META, which
under some servers (runserver) starts as a copy of the whole process environment, and every
setting. Its default filter hides only names that look secret (KEY, PASS, TOKEN, ...), and the
values that matter here do not: DATABASE_URL and the broker's URL carry their passwords.
Django also stops filtering the request's marked POST parameters and the functions' marked
local variables (`sensitive_post_parameters`, `sensitive_variables`: passwords) once DEBUG is on;
this filter keeps them hidden then too.
"""

from __future__ import annotations

import os
from typing import Any

from django.conf import settings
from django.http import HttpRequest
from django.views.debug import SafeExceptionReporterFilter


class TracebackOnlyFilter(SafeExceptionReporterFilter):
    def is_active(self, request: HttpRequest | None) -> bool:
        # Always: with DEBUG on too, a password chosen on a page never shows in its error page.
        return True

    def get_safe_settings(self) -> dict[str, Any]:
        # Which settings module is in use helps; its values are not worth the risk.
        return {"SETTINGS_MODULE": settings.SETTINGS_MODULE}

    def get_safe_request_meta(self, request: HttpRequest) -> dict[str, Any]:
        # The headers the client sent, still cleansed as Django does (Authorization, Cookie).
        # A name the environment also holds came from it (HTTP_PROXY, say), not from the client.
        return {
            name: value
            for name, value in super().get_safe_request_meta(request).items()
            if name.startswith("HTTP_") and name not in os.environ
        }
