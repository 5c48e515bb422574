#!/usr/bin/env bash
# Create a separate virtualenv with MushroomRL 1.10.2, used only as a speed
# baseline for our fitted Q-iteration (see benchmarks/mushroom_fqi.py).
#
#   bash benchmarks/setup_mushroom.sh        # from anywhere; idempotent
#   .bench/mushroom/bin/python benchmarks/mushroom_fqi.py --help
#
# The venv lives at <repo>/.bench/mushroom (ignored by git via "/.bench/").
#
# Why not plain `pip install mushroom-rl==1.10.2`: its requirements.txt pins
# torch==2.5.1 (which pulls gigabytes of CUDA wheels), numpy==1.24.4,
# scikit-learn==1.6.1, matplotlib, ... So we install:
#   1. torch==2.13.0+cpu   -- the CPU wheel already on disk (pip find-links
#                             /opt/wheels). The "+cpu" local version is pinned
#                             explicitly so pip can never pick a CUDA build.
#   2. mushroom-rl==1.10.2 with --no-deps
#   3. only what `from mushroom_rl.algorithms.value import FQI` needs at import
#      time, at the SAME versions as the batchrl project venv, so that the
#      benchmark measures the FQI algorithm rather than the sklearn version:
#        numpy 2.4.6, scipy 1.17.1, scikit-learn 1.9.1, joblib 1.6.0,
#        threadpoolctl 3.8.0   (same as /work/main/.venv)
#        tqdm                  (FQI's progress bar)
#        opencv-python-headless 4.13 (mushroom_rl.utils.frames/record import cv2;
#                                4.12 caps numpy<2.3, 4.13 accepts numpy 2.4;
#                                headless variant = same `cv2` module, no GUI libs)
#        pygame                (mushroom_rl.utils.viewer, imported by the
#                                built-in environments via mushroom_rl.core)
#   matplotlib (pinned by MushroomRL) is never imported by the library, so it is
#   not installed. MushroomRL 1.10.2 FQI works fine with numpy 2 / sklearn 1.9,
#   so no fallback to its pins (numpy 1.24.4, scikit-learn 1.6.1) is needed.
#
# Re-running is quick: a stamp file records the exact spec that was installed
# and the import check is the only thing redone.
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$REPO_ROOT/.bench/mushroom"
PYTHON="${PYTHON:-python3.11}"

TORCH_SPEC="torch==2.13.0+cpu"
MUSHROOM_SPEC="mushroom-rl==1.10.2"
DEPS=(
    "numpy==2.4.6"
    "scipy==1.17.1"
    "scikit-learn==1.9.1"
    "joblib==1.6.0"
    "threadpoolctl==3.8.0"
    "tqdm==4.67.1"
    "opencv-python-headless==4.13.0.92"
    "pygame==2.6.1"
)
SPEC="$TORCH_SPEC ${DEPS[*]} $MUSHROOM_SPEC"
STAMP="$VENV/.installed-spec"

check() {
    PYGAME_HIDE_SUPPORT_PROMPT=1 "$VENV/bin/python" - <<'EOF'
import importlib.metadata as md
from mushroom_rl.algorithms.value import FQI  # noqa: F401  (full import chain)
import torch
assert not torch.cuda.is_available() and "+cpu" in torch.__version__, torch.__version__
nv = [d.metadata["Name"] for d in md.distributions()
      if d.metadata["Name"].lower().startswith(("nvidia", "triton"))]
assert not nv, f"CUDA packages present: {nv}"
print("mushroom bench venv OK:",
      ", ".join(f"{p} {md.version(p)}" for p in
                ("mushroom-rl", "torch", "numpy", "scipy", "scikit-learn", "joblib")))
EOF
}

if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$SPEC" ]] && check; then
    exit 0
fi

if [[ ! -x "$VENV/bin/python" ]]; then
    mkdir -p "$(dirname "$VENV")"
    "$PYTHON" -m venv "$VENV"
fi
PIP=("$VENV/bin/python" -m pip install --disable-pip-version-check --only-binary=:all:)

# 1. CPU torch first (its own small deps: sympy, networkx, jinja2, ...).
"${PIP[@]}" "$TORCH_SPEC"
# 2. the import-time dependencies, at the project's versions.
"${PIP[@]}" "${DEPS[@]}"
# 3. MushroomRL itself without its pins (sdist only on PyPI -> allow building it).
"$VENV/bin/python" -m pip install --disable-pip-version-check --no-deps "$MUSHROOM_SPEC"

check
echo "$SPEC" > "$STAMP"
