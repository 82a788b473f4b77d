#!/bin/sh
# Runs a test binary on Oclgrind and fails it when the simulator wrote any
# report (invalid access, data race, ...) into OCLGRIND_LOG, whatever the
# test itself concluded: for test binaries that do not read the log
# themselves (test_ops does, per (op, dtype)).
#   run_clean.sh TEST [ARGS...]    with OCLGRIND_LOG set
set -u
: "${OCLGRIND_LOG:?OCLGRIND_LOG must name the simulator's log}"
rm -f "$OCLGRIND_LOG"
"$@"
rc=$?
if [ -s "$OCLGRIND_LOG" ]; then
  echo "Oclgrind reported (first lines of $OCLGRIND_LOG):" >&2
  head -n 40 "$OCLGRIND_LOG" >&2
  exit 1
fi
exit $rc
