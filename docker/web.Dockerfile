# The web process: Django under gunicorn, static files served by whitenoise. No model or R libraries.
FROM python:3.11-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_DISABLE_PIP_VERSION_CHECK=1 TZ=UTC \
    DUET_VAR_DIR=/var/lib/duet
RUN apt-get update && apt-get install -y --no-install-recommends libpq5 curl \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --create-home --home-dir /app duet
WORKDIR /app
COPY pyproject.toml README.md ./
COPY studyserver studyserver
COPY common common
COPY logic logic
COPY experiments experiments
COPY inference inference
COPY analysis analysis
COPY demo demo
COPY designs designs
COPY prolific prolific
COPY templates templates
COPY docs docs
COPY manage.py ./
RUN pip install --upgrade "pip>=25.1" && pip install . "gunicorn>=22" \
    && mkdir -p "$DUET_VAR_DIR" && chown duet "$DUET_VAR_DIR"
USER duet
RUN SECRET_KEY=build-only-not-secret python manage.py collectstatic --noinput
EXPOSE 8000
HEALTHCHECK --interval=15s --timeout=5s --retries=5 CMD curl -fsS http://127.0.0.1:8000/healthz || exit 1
# The access log (studyserver/gunicorn_conf.py) holds no client address, query string or session token.
CMD ["gunicorn", "studyserver.wsgi:application", "--config", "python:studyserver.gunicorn_conf", \
     "--bind", "0.0.0.0:8000", "--workers", "4", "--threads", "4", "--timeout", "60"]
