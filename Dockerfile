# The studio's image, for the web server and the Celery workers alike (see docker-compose.yml).
FROM python:3.12-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app

# Requirements first, so that a change to the code does not reinstall them.
COPY requirements.txt ./
RUN pip install -r requirements.txt

COPY . .

# The manifest of hashed static files is part of the image; settings need a key to load, this
# one is thrown away with the build step.
RUN DEBUG=false SECRET_KEY=collectstatic-only-not-a-secret python manage.py collectstatic --noinput

# Run as an unprivileged user that owns only var/ (uploads and other working files).
RUN groupadd --system --gid 1000 studio \
    && useradd --system --uid 1000 --gid 1000 --home-dir /app studio \
    && mkdir -p /app/var/media \
    && chown -R 1000:1000 /app/var
USER 1000:1000

EXPOSE 8000

# The web server by default; the worker service in docker-compose.yml overrides the command.
# WEB_CONCURRENCY (read by gunicorn) sets the number of worker processes.
CMD ["gunicorn", "config.wsgi", "--bind", "0.0.0.0:8000", "--access-logfile", "-"]
