#!/usr/bin/env bash
# Regenerate pgo/wafer.profdata, the profile release builds of wafer's crates
# are optimised with (pgo/rustc): build the extension instrumented, run
# `wafer bench --quick --repeat 1` (every policy on the engine benchmark,
# trace parsing, the timing benchmark) and the timing benchmark again,
# merge the counts of what ran
# (--sparse: code that did not run is compiled as without a profile), then
# reinstall. Run it in a venv where wafer is installed after changing
# a hot path: a function whose code changed loses its profile until then.
# Needs llvm-profdata of rustc's LLVM version: `rustup component add
# llvm-tools`, or Debian's llvm-N package.
set -euo pipefail
cd "$(dirname "$0")/.."
llvm="$(rustc -vV | sed -n 's/^LLVM version: \([0-9]*\).*/\1/p')"
profdata="$(ls "$(rustc --print sysroot)"/lib/rustlib/*/bin/llvm-profdata 2>/dev/null | head -1)"
[ -n "$profdata" ] || profdata="$(command -v "llvm-profdata-$llvm" || true)"
if [ -z "$profdata" ]; then
  echo "pgo/train.sh: no llvm-profdata for LLVM $llvm (rustup component add llvm-tools, or apt install llvm-$llvm)" >&2
  exit 2
fi
raw="$(mktemp -d)"
trap 'rm -rf "$raw"' EXIT
# Built as `pip install .` builds it: a profile names functions by their
# symbols, whose crate hashes differ between that build and `maturin
# develop`'s. Its own target directory: cargo does not see the wrapper's
# flags change.
WAFER_PGO="generate:$raw" CARGO_TARGET_DIR=target/pgo-generate pip install . --no-deps --force-reinstall --quiet
LLVM_PROFILE_FILE="$raw/bench-%p.profraw" wafer bench --quick --repeat 1 > "$raw/bench.txt"
# The timing model's benchmark once more, weighted: in the bench's counts the
# engine's WAF-mode runs outweigh it so far that its hot paths would not count
# as hot (weights measured: 1x gave timing mode +4% over no profile, 30x +8%,
# WAF mode +14% either way).
LLVM_PROFILE_FILE="$raw/timing-%p.profraw" wafer replay --workload uniform --logical-blocks 1048576 \
  --timing intel750 --arrival closed --queue-depth 32 --drive-writes 2 --quiet > /dev/null
"$profdata" merge --sparse -o pgo/wafer.profdata \
  $(for f in "$raw"/bench-*.profraw; do echo "--weighted-input=1,$f"; done) \
  $(for f in "$raw"/timing-*.profraw; do echo "--weighted-input=30,$f"; done)
echo "$llvm" > pgo/llvm-version
# Cargo does not track the profile: recompile wafer's crates with it.
touch crates/*/src/lib.rs
pip install . --no-deps --force-reinstall --quiet
echo "pgo/wafer.profdata: $(wc -c < pgo/wafer.profdata) bytes from $(ls "$raw"/*.profraw | wc -l) runs"
