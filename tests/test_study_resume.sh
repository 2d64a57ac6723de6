#!/usr/bin/env bash
# --resume of a point in the middle of its --precision rounds (run by CTest as
# cli_study_resume): a study is killed (SIGKILL, a real kill, no test hook) while its checkpoint
# holds a point in progress; resumed, it runs only the replications the checkpoint lacks (the
# count the simulator keeps, and the events of a replication changed in the checkpoint showing
# in the result: the kept ones are pooled, not run again) and writes the files of an
# uninterrupted run byte for byte (the JSON without the lines of the wall clock, wall_s and the
# rates per second, which measure the machine). A damaged point in progress is refused (exit 2),
# the file untouched.
# Usage: test_study_resume.sh OSN ROOT [MPIRUN]
set -u
OSN=$1
ROOT=$2
MPIRUN=${3:-}
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
. "$ROOT/tests/cli_lib.sh"
E=$ROOT/examples

# The JSON lines that measure the machine, not the model.
strip() { grep -v -E '"(wall_s|msgs_per_s|events_per_s)"' "$1"; }

# same_files NAME A.json B.json A.csv B.csv: the study's outputs equal byte for byte.
same_files() {
    if cmp -s <(strip "$2") <(strip "$3"); then ok; else bad "$1: the JSON differs"; fi
    if cmp -s "$4" "$5"; then ok; else bad "$1: the CSV differs"; fi
}

# kill_in_progress CKPT ARGS...: starts osn ARGS in the background and kills it (SIGKILL) once
# CKPT holds a point in progress after a finished point (or any point in progress when the
# study has one point); the caller reads the checkpoint as the kill left it.
kill_in_progress() {
    local ck=$1 need=$2
    shift 2
    "$OSN" "$@" 2>/dev/null &
    local pid=$! text
    while kill -0 $pid 2>/dev/null; do # CTest's timeout bounds it
        # One read of the file: it is replaced whole (rename), two greps could see two versions.
        text=$(cat "$ck" 2>/dev/null)
        if grep -q '"study_partial"' <<<"$text" &&
            [ "$(grep -c '"precision_target"' <<<"$text")" -ge "$need" ]; then
            kill -KILL $pid
            break
        fi
        sleep 0.01
    done
    wait $pid 2>/dev/null
}

# partial CKPT: "REPLICATIONS ROUNDS" of the point in progress in CKPT.
partial() {
    "$PY" -c "
import json, sys
p = [e['study_partial'] for e in json.load(open(sys.argv[1])) if 'study_partial' in e]
assert len(p) == 1, len(p)
print(p[0]['replications'], p[0]['rounds'])
" "$1"
}

# ---- the network simulator: 2 points, the second killed in its rounds ----------------------
# Precision 1e-4 is out of reach: rounds of 2, 4, 8, 16, 32 and 64 replications per point.
NET=(sim "$E/collapse.ini" --set net.time=4 --set net.warmup=1 --set source.rate=800
    --set control.kind=none,rate --threads 1 --replications 2 --precision 0.0001
    --max-replications 64)
run 0 "net uninterrupted" -- "${NET[@]}" --json "$TMP/full.json" --csv "$TMP/full.csv" -q
kill_in_progress "$TMP/ck.json" 1 "${NET[@]}" --resume "$TMP/ck.json" --json "$TMP/ck.json" -q
if read -r done rounds < <(partial "$TMP/ck.json") && [ "$done" -ge 2 ] && [ "$done" -lt 64 ]; then
    ok
else
    bad "net: the kill did not leave the second point in progress: $(head -c 300 "$TMP/ck.json")"
    done=0 rounds=0
fi
cp "$TMP/ck.json" "$TMP/ck.orig"
cp "$TMP/ck.json" "$TMP/ck_mpi.json"

# Damaged points in progress are refused, the file byte for byte as it was.
"$PY" -c "
import json, sys
src = json.load(open(sys.argv[1]))
def part(d):
    return [e for e in d if 'study_partial' in e][0]['study_partial']
def save(d, name):
    json.dump(d, open(sys.argv[2] + '/' + name + '.json', 'w'), indent=2)
d = json.loads(json.dumps(src)); r = part(d)['records']
r[0] = r[0].replace(' 1 ', ' 2 ', 1) if ' 1 ' in r[0] else r[0] + ' '
save(d, 'digit')                      # a record changed: the checksum no longer matches
d = json.loads(json.dumps(src)); del part(d)['records'][-1]
save(d, 'short')                      # a record missing
d = json.loads(json.dumps(src)); part(d)['rounds'] += 1
save(d, 'rounds')                     # rounds that do not fit the count (checksum too)
d = json.loads(json.dumps(src)); part(d)['totals'] = 7
save(d, 'totals')                     # another simulator's records
" "$TMP/ck.json" "$TMP"
for f in digit:checksum short:records rounds:checksum totals:totals; do
    name=${f%%:*}
    cp "$TMP/$name.json" "$TMP/$name.orig"
    run 2 "damaged $name" -- "${NET[@]}" --resume "$TMP/$name.json" --json "$TMP/$name.json" -q
    expect_err "damaged $name" "--resume $TMP/$name.json" "a point in progress, is refused" \
        "${f#*:}" "left as it is"
    cmp -s "$TMP/$name.json" "$TMP/$name.orig" && ok || bad "damaged $name: the file was changed"
done

# Resumed: the replications the checkpoint holds are not run again.
run 0 "net resume" -- "${NET[@]}" --resume "$TMP/ck.json" --json "$TMP/ck.json" \
    --csv "$TMP/ck.csv"
expect_err "net resume" "study of 2 points: 1 from $TMP/ck.json, 1 to run (1 of them in progress: $done replications done)" \
    "point 2 of 2 (control.kind=rate): precision NOT reached, stopped at the maximum with 64 replications (6 rounds); $done of them from $TMP/ck.json, $((64 - done)) run now"
same_files "net resumed = uninterrupted" "$TMP/full.json" "$TMP/ck.json" "$TMP/full.csv" "$TMP/ck.csv"

# The kept replications are pooled as the file has them: one more message in replication 1's
# record (its checksum made again) is one more message in the result: it was not run again.
"$PY" -c "
import json, sys
d = json.load(open(sys.argv[1]))
p = [e for e in d if 'study_partial' in e][0]['study_partial']
ev, msgs, rest = p['records'][0].split(' ', 2)
p['records'][0] = ' '.join((ev, str(int(msgs) + 1), rest))
h = 0xcbf29ce484222325
for line in ['%d %d %d' % (p['replications'], p['rounds'], p['totals'])] + p['records']:
    for c in (line + '\n').encode():
        h = ((h ^ c) * 0x100000001b3) % 2**64
p['checksum'] = '%016x' % h
json.dump(d, open(sys.argv[2], 'w'), indent=2)
" "$TMP/ck.orig" "$TMP/tamper.json"
run 0 "net tampered" -- "${NET[@]}" --resume "$TMP/tamper.json" --json "$TMP/tamper.json" -q
"$PY" -c "
import json, sys
a = json.load(open(sys.argv[1]))[1]
b = json.load(open(sys.argv[2]))[1]
assert b['messages'] == a['messages'] + 1, (a['messages'], b['messages'])
" "$TMP/full.json" "$TMP/tamper.json" && ok || bad "net tampered: the kept replication was run again"

# ---- the queue simulator: its return times are kept too (the quantiles need every one) -------
NODE=(sim "$E/sim_md1.ini" --set sim.time=300000 --set sim.warmup=100 --threads 1
    --replications 2 --precision 0.00001 --max-replications 32)
run 0 "node uninterrupted" -- "${NODE[@]}" --json "$TMP/nfull.json" --csv "$TMP/nfull.csv" -q
kill_in_progress "$TMP/nck.json" 0 "${NODE[@]}" --resume "$TMP/nck.json" --json "$TMP/nck.json" -q
if read -r ndone nrounds < <(partial "$TMP/nck.json") && [ "$ndone" -ge 2 ] && [ "$ndone" -lt 32 ]
then
    ok
else
    bad "node: the kill did not leave the point in progress (is the machine too fast?)"
    ndone=0
fi
run 0 "node resume" -- "${NODE[@]}" --resume "$TMP/nck.json" --json "$TMP/nck.json" \
    --csv "$TMP/nck.csv"
expect_err "node resume" "with 32 replications (5 rounds); $ndone of them from $TMP/nck.json, $((32 - ndone)) run now"
same_files "node resumed = uninterrupted" "$TMP/nfull.json" "$TMP/nck.json" "$TMP/nfull.csv" \
    "$TMP/nck.csv"
"$PY" -c "
import json, sys
d = json.load(open(sys.argv[1]))[0]
assert d['T_ret_p99'] > d['T_ret_p50'] > 0 and d['replications'] == 32, d
" "$TMP/nck.json" && ok || bad "node resume: no return-time quantiles"

# ---- under MPI: the point in progress resumed by 2 ranks, which share its replications -----
if [ -n "$MPIRUN" ]; then
    # One point to run on 2 ranks: they share its replications, those the file lacks.
    ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}detect_leaks=0" timeout 120 "$MPIRUN" -n 2 \
        --oversubscribe --allow-run-as-root "$OSN" "${NET[@]}" --resume "$TMP/ck_mpi.json" \
        --json "$TMP/ck_mpi.json" --csv "$TMP/ck_mpi.csv" >"$TMP/out" 2>"$TMP/err" && ok ||
        bad "mpi resume failed: $(head -c 300 "$TMP/err")"
    expect_err "mpi resume" "1 point to run on 2 ranks: each point's replications shared" \
        "$done of them from $TMP/ck_mpi.json, $((64 - done)) run now"
    same_files "net resumed on 2 ranks = uninterrupted" "$TMP/full.json" "$TMP/ck_mpi.json" \
        "$TMP/full.csv" "$TMP/ck_mpi.csv"
fi

summary
