"""The web process never imports R: checked in a fresh interpreter."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_r_leaves_the_environment_of_child_processes_alone(r_stack):
    with r_stack.r_session() as r:
        assert r.ro.r("1 + 1")[0] == 2
    # Started after R: a child Python must not pick up R's LD_LIBRARY_PATH (another libpython).
    result = subprocess.run([sys.executable, "-c", "import ssl, json; print('ok')"], capture_output=True, text=True)
    assert result.stdout.strip() == "ok", result.stderr


def test_loading_django_with_the_analysis_app_imports_no_r_pandas_or_matplotlib():
    code = (
        "import os, sys; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'studyserver.settings');"
        "import django; django.setup();"
        "from django.contrib import admin; admin.autodiscover();"
        "import studyserver.urls, analysis.admin, analysis.services, analysis.tasks, analysis.models;"
        "from django.contrib.admin import site; from experiments.models import Study;"
        "assert 'run_analysis' in [getattr(a, '__name__', a) for a in site._registry[Study].actions];"
        "from analysis.power_admin import PowerForm;"
        "form = PowerForm({'sizes': '10 20', 'nsim': 10, 'alpha': 0.05, 'target': 0.8, 'seed': 0}); assert form.is_valid(), form.errors;"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in {'rpy2', 'pymer4', 'pandas', 'matplotlib'});"
        "print(heavy); sys.exit(1 if heavy else 0)"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
