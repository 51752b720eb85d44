"""How refused requests are logged: one line each, where Django logs a traceback.

Django logs a PermissionDenied raised by a view with the exception's traceback, which says
nothing a developer needs: the refusal is the view doing its job. A walk through the studio as
an annotator filled the terminal of `./studio up` with them, and hid the errors that matter. A
refusal (any 4xx answer) becomes the method, the path, the status and who asked; a 500 keeps
its traceback.
"""

from __future__ import annotations

import logging


class RefusalsInOneLine(logging.Filter):
    """For the `django.request` logger, whose records carry the request and the status code."""

    def filter(self, record: logging.LogRecord) -> bool:
        status = getattr(record, "status_code", None)
        request = getattr(record, "request", None)
        if status is None or status >= 500 or request is None:
            return True
        # Loaded already when a view refused; a request refused before the middleware ran has
        # none.
        user = getattr(request, "user", None)
        user_id = user.pk if user is not None and user.is_authenticated else None
        # The path without the query string, which may hold a search or a token.
        record.msg = "%s %s %s user=%s"
        record.args = (request.method, request.path, status, user_id or "anonymous")
        record.exc_info = None
        record.exc_text = None
        return True
