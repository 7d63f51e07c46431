# CPU worker: Celery on the `cpu` queue — model runs on the CPU and analysis reports (R + lme4).
FROM python:3.11-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_DISABLE_PIP_VERSION_CHECK=1 TZ=UTC \
    DUET_VAR_DIR=/var/lib/duet HF_HUB_OFFLINE=1
RUN apt-get update && apt-get install -y --no-install-recommends libpq5 \
        r-base-core r-cran-lme4 r-cran-lmertest r-cran-emmeans r-cran-performance r-cran-pbkrtest \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --create-home --home-dir /app duet
WORKDIR /app
COPY . .
# PyTorch's CPU build, pinned (its CPU index); the gpu image takes the CUDA build instead.
RUN pip install --upgrade "pip>=25.1" \
    && pip install "torch==2.13.0" --index-url https://download.pytorch.org/whl/cpu \
    && pip install . --group inference --group analysis \
    && VENV=/usr/local bash scripts/setup.d/inference.sh \
    && mkdir -p "$DUET_VAR_DIR" && chown duet "$DUET_VAR_DIR"
USER duet
CMD ["celery", "-A", "studyserver", "worker", "--queues", "cpu", "--concurrency", "2", \
     "--max-tasks-per-child", "200", "--loglevel", "INFO"]
