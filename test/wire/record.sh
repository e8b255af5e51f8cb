#!/usr/bin/env bash
# Re-records upstream 21.4's answers to the corpus (test/wire/recorded/):
#   test/wire/record.sh [-keep] [scenario ...]
# Needs Debian's python3-ironic (see ../shared/tools/reference-ironic.sh);
# REFIRONIC_SCRIPT, REFIRONIC_DIR and REFIRONIC_PORT are passed through.
set -euo pipefail
cd "$(dirname "$0")/../.."
exec go run ./test/wire/record "$@"
