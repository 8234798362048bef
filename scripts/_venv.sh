# Sourced by scripts/serve, scripts/test and scripts/bench: make .venv and install the project into it.
# Re-installs only when pyproject.toml changed since the last install.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
EXTRAS="${1:-}"
PY="${PYTHON:-python3}"
if [ ! -x "$VENV/bin/python" ]; then
    echo "creating $VENV" >&2
    "$PY" -m venv "$VENV"
fi
STAMP="$VENV/.ctiwire-installed${EXTRAS:+-$EXTRAS}"
current() {  # an install of these extras (or, for the runtime alone, of any extras) newer than pyproject.toml
    local stamp
    for stamp in "$STAMP" ${EXTRAS:+} $( [ -z "$EXTRAS" ] && ls "$VENV"/.ctiwire-installed* 2>/dev/null ); do
        [ -f "$stamp" ] && [ "$stamp" -nt "$ROOT/pyproject.toml" ] && return 0
    done
    return 1
}
if ! current; then
    echo "installing ctiwire${EXTRAS:+[$EXTRAS]} into $VENV" >&2
    "$VENV/bin/pip" install --quiet --disable-pip-version-check -e "$ROOT${EXTRAS:+[$EXTRAS]}"
    touch "$STAMP"
fi
