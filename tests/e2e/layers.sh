#!/bin/bash
# tests/e2e/layers.sh - the source tree's includes point down the layer stack (make check-layers).
source "$(dirname "$0")/lib.sh"
out=$("$SPENT_TOP/scripts/check-layers.sh" 2>&1)
rc=$?
if [ $rc = 0 ]; then pass "layers_no_include_points_up"; else fail "layers_no_include_points_up: $(echo "$out" | head -3 | tr '\n' ' ')"; fi
