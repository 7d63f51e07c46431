# GPU worker: Celery on the `gpu` queue, one process per worker so each loads its model once.
FROM nvidia/cuda:12.8.1-cudnn-runtime-ubuntu22.04
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_DISABLE_PIP_VERSION_CHECK=1 TZ=UTC \
    DEBIAN_FRONTEND=noninteractive DUET_VAR_DIR=/var/lib/duet HF_HUB_OFFLINE=1
RUN apt-get update && apt-get install -y --no-install-recommends software-properties-common \
    && add-apt-repository -y ppa:deadsnakes/ppa && apt-get update \
    && apt-get install -y --no-install-recommends python3.11 python3.11-venv libpq5 \
    && rm -rf /var/lib/apt/lists/* \
    && python3.11 -m venv /opt/venv && useradd --system --create-home --home-dir /app duet
ENV PATH=/opt/venv/bin:$PATH
WORKDIR /app
COPY . .
RUN pip install --upgrade "pip>=25.1" && pip install . --group inference \
    && VENV=/opt/venv bash scripts/setup.d/inference.sh \
    && mkdir -p "$DUET_VAR_DIR" && chown duet "$DUET_VAR_DIR"
USER duet
CMD ["celery", "-A", "studyserver", "worker", "--queues", "gpu", "--pool", "solo", \
     "--concurrency", "1", "--loglevel", "INFO"]
