#!/usr/bin/env bash
# Callers who give up, on the wire (issues 30 and 33): OSN's load generator with
# source.patience against SIPp as the callee, all on 127.0.0.1 with ports the processes chose.
# The callee (tests/node/sipp/uas_ring_delay.xml) sends nothing for 1 s (no 100 Trying), then
# 180, then 200 OK at d = 2 s after the INVITE unless a CANCEL came; a CANCEL gets 200 and the
# INVITE 487, which the generator's transaction layer ACKs. Four generators at once, one
# patience each, about 200 calls each:
#   det 2.5 s  > d: no call abandoned, every call good;
#   det 1.5 s  < d, after the 180: every call abandoned, one CANCEL each, sent at once;
#   det 0.5 s  before any provisional response: RFC 3261 9.1 forbids the CANCEL, the caller
#              waits for the 180 and CANCELs then; every call abandoned, and SIPp, which has no
#              CANCEL in its first second, fails any call whose CANCEL came early;
#   exp mean 2 s: a caller gives up when its patience is shorter than d: the abandoned
#              fraction is 1 - exp(-d/m) = 0.632, checked within a 99.9% binomial interval.
# Every call accounted for: SIPp's SuccessfulCall(C) = the calls the generators started, none
# failed on either side. Then a callee whose 200 OK crosses the CANCEL
# (uas_cancel_cross.xml): the caller who gave up ACKs the 2xx and hangs up at once (RFC 3261
# 15): every call abandoned, one ACK of a 2xx and one BYE answered 200 each.
#
# Usage: test_node_genabandon.sh OSN ROOT     Prints "N passed, M failed"; exits 1 on a failure.
set -u
OSN=$1
ROOT=$(cd "$2" && pwd)
. "$ROOT/tests/node/lib.sh"
nl_init genabandon 150
export OSN
SCEN=$ROOT/examples/node_collapse.ini
SIPP_DIR=$ROOT/tests/node/sipp
SECS=4
RATE=50

# gen NAME NEXT_PORT [osn node args..]: a generator in the background ($SECS s at $RATE/s),
# its summary in $NL_TMP/NAME; its pid in GEN_PIDS.
GEN_PIDS=()
gen() {
    local name=$1 next=$2
    shift 2
    local dir=$NL_TMP/$name
    mkdir -p "$dir"
    NL_DIR[$name]=$dir
    timeout -k 5 $((SECS + 80)) "$OSN" node "$SCEN" --set node.element=uac \
        --set node.listen=127.0.0.1:0 --set "node.next_hop=127.0.0.1:$next" \
        --set "node.duration=$SECS" --set "source.rate=$RATE" --set source.hold=0.2 \
        --set source.retry_prob=0 --json "$dir/summary.json" -q "$@" \
        >"$dir/node.out" 2>"$dir/node.err" {NL_LOCK_FD}>&- &
    GEN_PIDS+=($!)
}

# uac NAME KEY..: the generator's "uac" counts, space-separated.
uac() {
    local name=$1
    shift
    "$NL_PY" - "${NL_DIR[$name]}/summary.json" "$@" <<'PY'
import json, sys
u = json.load(open(sys.argv[1]))["uac"]
print(" ".join(str(u[k]) for k in sys.argv[2:]))
PY
}

# wait_sipp NAME N: until SIPp's successful + failed calls reach N (its stats row is per second).
wait_sipp() {
    for _ in $(seq 1 50); do
        [ $(($(nl_stat "$1" 'SuccessfulCall(C)') + $(nl_stat "$1" 'FailedCall(C)'))) -ge "$2" ] &&
            return
        sleep 0.2
    done
}

# ---- 1. the ringing callee, four patience laws at once
NL_UAS_TIME=60 nl_up "SIPp uas did not start" nl_sipp_uas ring 0 -sf "$SIPP_DIR/uas_ring_delay.xml"
nl_require_up
P=${NL_PORT[ring]}
gen none "$P" --set source.patience=det --set source.patience_mean=2.5
gen ring "$P" --set source.patience=det --set source.patience_mean=1.5
gen early "$P" --set source.patience=det --set source.patience_mean=0.5
gen exp "$P" --set source.patience=exp --set source.patience_mean=2 --set source.rate=$((2 * RATE))
for p in "${GEN_PIDS[@]}"; do
    wait "$p"
    nl_check $? "generator pid $p: exit status"
done
total=0
for g in none ring early exp; do
    read -r started good abandoned cancels unfinished failed_other \
        < <(uac $g calls_started good abandoned cancels unfinished failed_other)
    echo "patience $g: $started started, $good good, $abandoned abandoned, $cancels CANCELs," \
        "$unfinished unfinished, $failed_other failed (other)"
    total=$((total + started))
    [ "$unfinished" = 0 ] && [ "$failed_other" = 0 ] && [ "$started" -gt 100 ]
    nl_check $? "$g: started $started (> 100), unfinished $unfinished, failed_other $failed_other"
    case $g in
    none)
        [ "$good" = "$started" ] && [ "$abandoned" = 0 ] && [ "$cancels" = 0 ]
        nl_check $? "det patience 2.5 s > 2 s answer: none abandoned ($abandoned), all good" ;;
    ring | early)
        [ "$abandoned" = "$started" ] && [ "$cancels" = "$started" ] && [ "$good" = 0 ]
        nl_check $? "det patience ($g) < 2 s answer: all abandoned ($abandoned of $started)," \
            "one CANCEL each ($cancels)" ;;
    exp)
        "$NL_PY" - "$started" "$abandoned" "$good" <<'PY'
import math, sys
n, a, g = map(int, sys.argv[1:])
p = 1 - math.exp(-2.0 / 2.0)
half = 3.29 * math.sqrt(p * (1 - p) / n)  # 99.9% normal approximation of the binomial
print(f"exp patience mean 2 s, answer at 2 s: abandoned {a / n:.3f} of {n}, "
      f"1 - exp(-d/m) = {p:.3f} +- {half:.3f}")
sys.exit(0 if abs(a / n - p) <= half and a + g == n else 1)
PY
        nl_check $? "exp patience: abandoned fraction not 1 - exp(-d/m) within the interval" ;;
    esac
done
wait_sipp ring "$total"
ok=$(nl_stat ring 'SuccessfulCall(C)')
bad=$(nl_stat ring 'FailedCall(C)')
echo "SIPp uas: $ok successful, $bad failed, of $total calls started"
[ "$ok" = "$total" ] && [ "$bad" = 0 ]
nl_check $? "SIPp uas: successful $ok, failed $bad, expected $total and 0 (an early CANCEL fails)"
nl_stop ring

# ---- 2. the 2xx crosses the CANCEL
GEN_PIDS=()
NL_UAS_TIME=40 nl_up "SIPp uas did not start" nl_sipp_uas cross 0 -sf "$SIPP_DIR/uas_cancel_cross.xml"
nl_require_up
gen crossg "${NL_PORT[cross]}" --set source.patience=det --set source.patience_mean=0.5
wait "${GEN_PIDS[0]}"
nl_check $? "generator (crossing): exit status"
read -r started good abandoned cancels acks byes_sent byes_ok unfinished \
    < <(uac crossg calls_started good abandoned cancels acks_2xx byes_sent byes_ok unfinished)
echo "2xx crossing the CANCEL: $started started, $abandoned abandoned, $cancels CANCELs," \
    "$acks ACKs of a 2xx, $byes_sent BYEs ($byes_ok answered)"
[ "$started" -gt 100 ] && [ "$abandoned" = "$started" ] && [ "$cancels" = "$started" ] &&
    [ "$acks" -ge "$started" ] && [ "$byes_sent" = "$started" ] && [ "$byes_ok" = "$started" ] &&
    [ "$unfinished" = 0 ] && [ "$good" = 0 ]
nl_check $? "crossing: each call abandoned, CANCELled, its 2xx ACKed and hung up with a BYE"
wait_sipp cross "$started"
ok=$(nl_stat cross 'SuccessfulCall(C)')
bad=$(nl_stat cross 'FailedCall(C)')
[ "$ok" = "$started" ] && [ "$bad" = 0 ]
nl_check $? "SIPp uas (crossing): successful $ok, failed $bad, expected $started and 0"
nl_stop cross
nl_summary
