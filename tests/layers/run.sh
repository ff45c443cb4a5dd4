#!/bin/bash
# Layers suite: the gateway's layers point one way (tests/layers/layers.py;
# today's back-edges are listed in tests/layers/debt.txt, a list that may
# only shrink). Needs the release build's objects (make).
. "$(dirname "$0")/../lib/harness.sh"
h_begin layers-test
python3 tests/layers/layers.py >"$T/out" 2>&1
h_count "$T/out"
h_finish
