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
# A fresh install takes a minute or more: one line per package as pip reaches it, not silence and not
# pip's whole output (kept in the log, whose end is shown when pip fails). No terminal needed (CI).
progress() {
    awk '/^Collecting /      { n++; printf "  [%d] %s\n", n, $2; fflush() }
         /^Requirement already satisfied/ { kept++ }
         /^Installing collected packages/ { printf "  installing %d packages (%d already there)...\n", n, kept; fflush() }
         /^Successfully installed/        { print "  done"; fflush() }'
}
if ! current; then
    LOG="$VENV/pip-install.log"
    echo "installing ctiwire${EXTRAS:+[$EXTRAS]} and its dependencies into $VENV (pip's output: $LOG)" >&2
    if ! "$VENV/bin/pip" install --disable-pip-version-check --progress-bar off -e "$ROOT${EXTRAS:+[$EXTRAS]}" \
            2>&1 | tee "$LOG" | progress >&2; then
        echo "pip install failed; the end of $LOG:" >&2
        tail -n 20 "$LOG" >&2
        exit 1
    fi
    touch "$STAMP"
fi
