# Sourced by the scripts in this folder: makes .venv (Python 3.11+) and installs the project into it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "tempo-agents needs Python 3.11 or newer")'
    "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
