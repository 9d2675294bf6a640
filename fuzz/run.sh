#!/usr/bin/env bash
# Run every fuzz target for SECONDS (default 30) each, one after the other, starting from the
# checked-in seeds; print the final libFuzzer figures per target; exit nonzero if any target
# crashed (panic, timeout, out of memory). Installs the nightly toolchain and cargo-fuzz when
# they are missing, so it runs non-interactively on a fresh machine that has rustup.
#
#   fuzz/run.sh [SECONDS] [TARGET...]
#
# Environment: FUZZ_SANITIZER (default none: the code is safe Rust, and without ASan a run
# executes about twice as many inputs; set `address` to use ASan), FUZZ_TIMEOUT (seconds one
# input may take before libFuzzer reports a hang, default 25).
set -euo pipefail

cd "$(dirname "$0")/.."
seconds="${1:-30}"
shift || true
sanitizer="${FUZZ_SANITIZER:-none}"
timeout="${FUZZ_TIMEOUT:-25}"

if ! rustup run nightly rustc --version >/dev/null 2>&1; then
    rustup toolchain install nightly --profile minimal
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    cargo +nightly install cargo-fuzz --locked
fi

if [ "$#" -gt 0 ]; then
    targets=("$@")
else
    mapfile -t targets < <(cargo +nightly fuzz list --fuzz-dir fuzz)
fi

echo "== building ${#targets[@]} fuzz targets (sanitizer: $sanitizer)"
cargo +nightly fuzz build --fuzz-dir fuzz -s "$sanitizer"

mkdir -p fuzz/logs
failed=()
summary=()
for target in "${targets[@]}"; do
    corpus="fuzz/corpus/$target"
    mkdir -p "$corpus"
    if [ -d "fuzz/seeds/$target" ]; then
        cp -n fuzz/seeds/"$target"/* "$corpus"/ 2>/dev/null || true
    fi
    log="fuzz/logs/$target.log"
    echo "== $target: ${seconds}s (log: $log)"
    status=ok
    if ! cargo +nightly fuzz run --fuzz-dir fuzz -s "$sanitizer" "$target" "$corpus" -- \
        -max_total_time="$seconds" -timeout="$timeout" -print_final_stats=1 >"$log" 2>&1; then
        status=CRASH
        failed+=("$target")
        # The panic message and the saved input are near the end of the log.
        grep -E "panicked at|ERROR: libFuzzer|Test unit written to|SUMMARY" "$log" | head -20 || true
    fi
    # libFuzzer's last status line: "#EXECS <event> cov: N ft: N corp: ... exec/s: N ...".
    last="$(grep -E '^#[0-9]+' "$log" | grep 'cov:' | tail -1 || true)"
    execs="$(sed -nE 's/^#([0-9]+).*/\1/p' <<<"$last")"
    cov="$(sed -nE 's/.* cov: ([0-9]+).*/\1/p' <<<"$last")"
    ft="$(sed -nE 's/.* ft: ([0-9]+).*/\1/p' <<<"$last")"
    rate="$(sed -nE 's/.* exec\/s: ([0-9]+).*/\1/p' <<<"$last")"
    line="$target: status=$status execs=${execs:-?} exec/s=${rate:-?} cov=${cov:-?} ft=${ft:-?} corpus=$(find "$corpus" -type f | wc -l)"
    echo "$line"
    summary+=("$line")
done

echo "== summary (${seconds}s per target)"
printf '%s\n' "${summary[@]}"
if [ "${#failed[@]}" -gt 0 ]; then
    echo "crashed: ${failed[*]} (inputs under fuzz/artifacts/<target>/)"
    exit 1
fi
