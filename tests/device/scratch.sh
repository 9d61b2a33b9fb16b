# Sourced by the tests of scripts/device/ (bash, from the test file): SRC = the repository root,
# T = a temporary folder removed on exit, R = $T/repo (a scratch tree the test fills), and fail().
set -euo pipefail
SRC=$(cd "$(dirname "${BASH_SOURCE[1]}")/../.." && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
R=$T/repo
