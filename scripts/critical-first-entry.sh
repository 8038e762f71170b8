#!/usr/bin/env bash
# Where a slave's first entry of a lock goes (docs/critical.md, "Session 13"): runs
# bench/critical/first_entry.c on 3 local nodes with --log critical:debug,locks:debug (the monitors'
# debug lines carry the monotonic clock, the program's omp_get_wtime's) and prints, per phase,
# the median over its entries of slave 1's first entries (us):
#   program -> monitor      the program's stamp before the entry to the monitor's "entering" (the trap)
#   request send            "entering" to "asked the master" (the request frame sent)
#   to the master           "asked" to the master's "node 1 asks" (its thread's wake-up, the read)
#   service                 the master's "asks" to its "lease/grant ... to node 1"
#   grant back              that to the slave's "got" (the grant's send, the slave monitor's wake-up)
#   hand-over               "got" to "handed over" (a slot of the program's words, no exit trap)
#   monitor -> program      "handed over" to the program's stamp after the entry (resume)
# and when the request came against the start of the master's nearest wait for the parts (negative:
# before it, the master still in its own calls of the region: its wait spin cannot catch it).
#   scripts/critical-first-entry.sh [BUILD_DIR] [REGIONS]   (default build-bench, 40)
#   FIRST_ENTRY_ENV="VAR=VALUE ...": the job's environment (e.g. CAPE_LOCK_SPIN_US=0 CAPE_MASTER_SPIN_US=0).
#   Debug logging itself adds a few us per line: compare runs of this script, not with bench-critical.
set -uo pipefail
build=${1:-build-bench}
regions=${2:-40}
root=$(cd "$(dirname "$0")/.." && pwd)
case $build in /*) ;; *) build=$root/$build ;; esac
for t in "$build/cli/cape" "$build/translator/cape-cc"; do
  [ -x "$t" ] || { echo "critical-first-entry: $t is missing: build first" >&2; exit 1; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/cape-first-entry.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
"$build/translator/cape-cc" -O2 "$root/bench/critical/first_entry.c" -o first_entry 2>cc.err || { cat cc.err; exit 1; }
read -r -a envs <<<"${FIRST_ENTRY_ENV:-}"
env "${envs[@]}" FIRST_ENTRY_STAMPS=1 "$build/cli/cape" run -n 3 --log critical:debug,locks:debug,calls:info ./first_entry "$regions" \
  >out 2>master.err || { tail -5 master.err; exit 1; }
grep -h 'first-entry median' master.err
# One row per entry (lock names in the order slave 1 entered them = the regions' order).
awk '
  function t(l) { if (match(l, /\[t [0-9.]+\]/)) return substr(l, RSTART + 3, RLENGTH - 4) + 0; return -1 }
  function name(l) { if (match(l, /.atomic@0x[0-9a-f]+./)) return substr(l, RSTART + 1, RLENGTH - 2); return "" }
  FNR == 1 { f++ }
  f == 1 && /^at [0-9]+ / { t0[$2] = $3; t1[$2] = $4; next }
  f == 1 && /waiting for the slaves. parts/ { w[++nw] = t($0); next }
  f == 1 && /node 1 asks for/ { n = name($0); if (n != "" && !(n in ma)) ma[n] = t($0); next }
  f == 1 && /(lease|grant) .* to node 1:/ { n = name($0); if (n != "" && !(n in mg)) mg[n] = t($0); next }
  f == 2 && /entering .*\(a trap\)/ { n = name($0); if (n != "" && !(n in e)) { e[n] = t($0); order[++k] = n }; next }
  f == 2 && /asked the master for/ { n = name($0); if (n != "" && !(n in a)) a[n] = t($0); next }
  f == 2 && /got .atomic/ { n = name($0); if (n != "" && !(n in g)) g[n] = t($0); next }
  f == 2 && /handed over to slot/ { n = name($0); if (n != "" && !(n in h)) h[n] = t($0); next }
  END {
    for (r = 0; r < k; r++) {
      n = order[r + 1]
      if (!((r "") in t0) || !(n in a) || !(n in ma) || !(n in mg) || !(n in g) || !(n in h)) continue
      lead = 1e9  # the arrival of the request minus the start of the nearest wait for parts
      for (i = 1; i <= nw; i++) if ((ma[n] - w[i]) ^ 2 < lead ^ 2) lead = ma[n] - w[i]
      printf "%.1f %.1f %.1f %.1f %.1f %.1f %.1f %.1f %.1f\n", (e[n] - t0[r]) * 1e6, (a[n] - e[n]) * 1e6,
        (ma[n] - a[n]) * 1e6, (mg[n] - ma[n]) * 1e6, (g[n] - mg[n]) * 1e6, (h[n] - g[n]) * 1e6,
        (t1[r] - h[n]) * 1e6, (t1[r] - t0[r]) * 1e6, lead * 1e6
    }
  }' master.err cape-logs/node.1.log >rows
[ -s rows ] || { echo "critical-first-entry: no entry found in the logs" >&2; exit 1; }
echo "slave 1's first entry of a lock, $(wc -l <rows) entries, medians (us); load $(cut -d' ' -f1-3 /proc/loadavg)"
col=1
for label in "program -> monitor (the trap)" "request send" "to the master (its wake-up, the read)" "service" \
             "grant back (send, the slave's wake-up)" "hand-over" "monitor -> program (resume)" "total (the program's clock)" \
             "request - the master's nearest wait start"; do
  printf '  %-42s %8s\n' "$label" "$(cut -d' ' -f$col rows | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }')"
  col=$((col + 1))
done
grep -h 'grants caught\|lock frames read\|spin gate' master.err cape-logs/node.1.log | sed 's/^.*info: /  /'
