#!/usr/bin/env bash
# Creates (once, and again when requirements.txt changes) the Python virtual environment the
# aioquic interop tests run their peer in, and prints the path of its interpreter.
# Usage: interop/aioquic/setup.sh [VENV_DIR]   (default: target/aioquic-venv in the workspace)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
venv=${1:-$here/../../target/aioquic-venv}
if [ ! -x "$venv/bin/python" ] || ! cmp -s "$here/requirements.txt" "$venv/requirements.txt"; then
    python3 -m venv "$venv" >&2
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$here/requirements.txt" >&2
    cp "$here/requirements.txt" "$venv/requirements.txt"
fi
echo "$venv/bin/python"
