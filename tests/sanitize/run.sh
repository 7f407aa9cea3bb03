#!/usr/bin/env bash
# Runs one sanitizer check (tests/CMakeLists.txt: ctest -L sanitize) with env.sh's settings.
#   run.sh COMMAND...
source "$(dirname "$0")/env.sh"
exec "$@"
