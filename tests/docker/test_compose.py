"""Docker cannot run on the development machines, so the stack's files are checked by parsing them."""
from __future__ import annotations

import re
from pathlib import Path

import yaml

DOCKER = Path(__file__).resolve().parents[2] / "docker"


def _compose() -> dict:
    return yaml.safe_load((DOCKER / "compose.yaml").read_text())


def test_services_images_and_dependencies():
    services = _compose()["services"]
    assert set(services) == {"postgres", "redis", "web", "worker-cpu", "worker-gpu"}
    assert services["postgres"]["image"].startswith("postgres:")
    assert services["redis"]["image"].startswith("redis:")
    for name in ("web", "worker-cpu", "worker-gpu"):
        service = services[name]
        assert service["build"]["context"] == ".."  # the repository root, as the Dockerfiles expect
        assert (DOCKER.parent / service["build"]["dockerfile"]).is_file()
        assert service["depends_on"]["postgres"]["condition"] == "service_healthy"
        assert service["depends_on"]["redis"]["condition"] == "service_healthy"
        assert service["env_file"] == "duet.env"
        assert service["environment"]["DUET_TASK_MODE"] == "celery"  # background work on the workers' queues
        assert "model-cache:/var/lib/duet/models" in service["volumes"]


def test_every_service_has_a_healthcheck():
    for name, service in _compose()["services"].items():
        check = service.get("healthcheck")
        assert check and check["test"], f"{name} has no health check"


def test_gpu_worker_reserves_gpus_and_listens_on_the_gpu_queue():
    gpu = _compose()["services"]["worker-gpu"]
    devices = gpu["deploy"]["resources"]["reservations"]["devices"]
    assert devices[0]["driver"] == "nvidia" and "gpu" in devices[0]["capabilities"]
    dockerfile = (DOCKER / "gpu-worker.Dockerfile").read_text()
    assert '"--queues", "gpu"' in dockerfile and '"--pool", "solo"' in dockerfile
    assert '"--queues", "cpu"' in (DOCKER / "worker.Dockerfile").read_text()


def test_torch_is_pinned_everywhere_it_is_installed():
    for path in DOCKER.glob("*.Dockerfile"):
        for match in re.finditer(r"torch[^\s\"']*", path.read_text()):
            token = match.group(0)
            if token.startswith("torch=="):
                assert token == "torch==2.13.0", (path.name, token)


def test_env_example_names_every_setting_and_holds_no_real_secret():
    example = dict(
        line.split("=", 1)
        for line in (DOCKER / "duet.env.example").read_text().splitlines()
        if line and not line.startswith("#")
    )
    for key in ("SECRET_KEY", "DATABASE_URL", "CELERY_BROKER_URL", "DUET_TASK_MODE", "ALLOWED_HOSTS", "POSTGRES_PASSWORD"):
        assert key in example
    assert example["DUET_TASK_MODE"] == "celery"
    assert example["SECRET_KEY"].startswith("change-me")
    assert example["DATABASE_URL"].startswith("postgres://") and example["CELERY_BROKER_URL"].startswith("redis://")
    assert "docker/duet.env" in (DOCKER.parent / ".dockerignore").read_text()
