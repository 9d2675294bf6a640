#!/usr/bin/env bash
# Count the public items of each workspace library crate as rustdoc sees them: what a user of
# the crate can name (items reachable through public modules and re-exports), by kind, and how
# many of them carry no doc comment. Used to track the public surface (docs/ARCHITECTURE.md,
# "Public surface"); the numbers move when a module goes private or an item stops being `pub`.
#
#   scripts/public-items.sh [CRATE...]     (default: every library crate of the workspace)
#
# Needs a nightly toolchain (rustdoc's JSON output is unstable; `fuzz/run.sh` installs one) and
# python3. Builds into target/nightly so the stable target directory is left alone.
#
# Counted: items of the crate itself (not of its dependencies) whose visibility is "public",
# re-exports (`pub use`) excluded so that an item re-exported from a private module counts once.
# Columns: mod = modules (the crate root included), type = structs, enums, unions, traits and
# type aliases, fn = functions and methods (trait-impl methods are not "public" in rustdoc's sense
# and are not counted), const = constants and statics, field = public struct fields, total = all
# of these plus macros, undoc = counted items without docs.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$#" -gt 0 ]; then
    crates=("$@")
else
    # Library crates only: a package whose targets include a "lib".
    mapfile -t crates < <(cargo metadata --no-deps --format-version 1 | python3 -c '
import json, sys
meta = json.load(sys.stdin)
for p in meta["packages"]:
    if any("lib" in t["kind"] for t in p["targets"]):
        print(p["name"])
')
fi

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target/nightly}"
mkdir -p "$CARGO_TARGET_DIR"
printf '%-16s %5s %5s %5s %6s %6s %6s %6s %6s\n' crate mod type fn const field total undoc nonex
for crate in "${crates[@]}"; do
    cargo +nightly rustdoc -q -p "$crate" --lib -- -Z unstable-options --output-format json \
        >/dev/null 2>"$CARGO_TARGET_DIR/public-items-$crate.log" || {
        cat "$CARGO_TARGET_DIR/public-items-$crate.log" >&2
        exit 1
    }
    json="$CARGO_TARGET_DIR/doc/${crate//-/_}.json"
    python3 - "$crate" "$json" <<'PY'
import json, sys
crate, path = sys.argv[1], sys.argv[2]
doc = json.load(open(path))
groups = {
    "module": "mod",
    "struct": "type", "enum": "type", "union": "type", "trait": "type", "type_alias": "type",
    "trait_alias": "type",
    "function": "fn",
    "constant": "const", "static": "const", "assoc_const": "const",
    "struct_field": "field",
}
counts = {k: 0 for k in ("mod", "type", "fn", "const", "field")}
total = undoc = nonex = 0
for item in doc["index"].values():
    if item["crate_id"] != 0 or item["visibility"] != "public":
        continue
    kind = next(iter(item["inner"])) if isinstance(item["inner"], dict) else item["inner"]
    if kind == "use":
        continue
    group = groups.get(kind)
    if group:
        counts[group] += 1
    total += 1
    if not (item.get("docs") or "").strip():
        undoc += 1
    # `attrs` holds strings in some format versions and objects in others: match the text.
    if kind in ("struct", "enum") and any("non_exhaustive" in str(a) for a in item["attrs"]):
        nonex += 1
print(f"{crate:<16} {counts['mod']:5} {counts['type']:5} {counts['fn']:5} {counts['const']:6} "
      f"{counts['field']:6} {total:6} {undoc:6} {nonex:6}")
PY
done
