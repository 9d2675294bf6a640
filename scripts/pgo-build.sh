#!/usr/bin/env bash
# Build the CLI with profile-guided optimisation (PGO) for long simulator work: full lab suites,
# campaigns. The results are the same as the plain release build's (the same code, laid out
# and inlined by what the training runs executed); only the speed differs
# (docs/PERFORMANCE.md, "Seventh round": a profile-guided build).
#
#   scripts/pgo-build.sh            # then: target/pgo/<host>/release/mpquic lab run ...
#
# Steps: an instrumented build, training runs of the simulator (the quick run of every lab suite
# but `sim-vs-real`, and the two benchmark scenarios with other seeds; simulation crypto),
# the profiles merged with the toolchain's own llvm-profdata (rustup's `llvm-tools`
# component, installed when missing: a system llvm-profdata of another LLVM version cannot
# read rustc's profiles), then the optimised build. About twice a release build's time, and two
# minutes of training.
set -euo pipefail

cd "$(dirname "$0")/.."
host=$(rustc -vV | sed -n 's/^host: //p')
bin_dir="$(rustc --print sysroot)/lib/rustlib/$host/bin"
profdata="$bin_dir/llvm-profdata"
if [ ! -x "$profdata" ]; then
    if ! command -v rustup >/dev/null; then
        echo "pgo-build: no llvm-profdata at $profdata, and no rustup to install llvm-tools" >&2
        exit 1
    fi
    echo "pgo-build: installing rustup's llvm-tools component (for llvm-profdata)" >&2
    rustup component add llvm-tools
fi
if [ ! -x "$profdata" ]; then
    echo "pgo-build: no llvm-profdata at $profdata" >&2
    exit 1
fi

work=target/pgo-work
raw="$PWD/$work/raw"
rm -rf "$raw" "$work/train"
mkdir -p "$raw" "$work/train"

# An explicit --target keeps RUSTFLAGS away from build scripts and proc macros, so only the
# binary's own code is instrumented and optimised.
echo "pgo-build: instrumented build" >&2
RUSTFLAGS="-Cprofile-generate=$raw" cargo build --release -p mpquic-cli \
    --target "$host" --target-dir "$work/gen"
gen="$work/gen/$host/release/mpquic"

echo "pgo-build: training runs" >&2
for suite in $("$gen" lab list | awk '{print $1}'); do
    # sim-vs-real's other half needs real sockets and namespaces: not simulator work.
    [ "$suite" = sim-vs-real ] && continue
    "$gen" lab run "$suite" --quick --crypto sim --jobs 2 --out "$work/train/$suite" >/dev/null
done
"$gen" sim --path rate=100mbit,rtt=40ms,queue=1bdp --download 20MB --cc cubic --seed 7 \
    --crypto sim --quiet >/dev/null
"$gen" sim --path rate=100mbit,rtt=40ms,queue=1bdp --path rate=50mbit,rtt=60ms,queue=1bdp \
    --download 20MB --multipath mpns --cc cubic --seed 7 --crypto sim --quiet >/dev/null

"$profdata" merge -o "$work/merged.profdata" "$raw"
# Cargo does not look into the profile: a path named after its contents makes a new profile
# (other code, other training) rebuild what it optimises.
rm -f "$work"/merged-*.profdata
sum=$(sha256sum "$work/merged.profdata" | cut -c1-16)
profile="$PWD/$work/merged-$sum.profdata"
cp "$work/merged.profdata" "$profile"

echo "pgo-build: optimised build" >&2
RUSTFLAGS="-Cprofile-use=$profile" cargo build --release -p mpquic-cli \
    --target "$host" --target-dir target/pgo
echo "target/pgo/$host/release/mpquic"
