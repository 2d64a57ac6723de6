#!/usr/bin/env bash
# Runs the further hostile inputs of tests/hostile/README.md and prints one table row each:
#     bash tests/hostile/probe.sh PATH_TO_osn REPO_ROOT > rows.md
# A row is "| # | command | input | expected | got |"; "got" starts with FINDING when the exit
# status or the message is not what OSN promises (exit 2 naming the key or flag; 0 when valid).
# Not run by CTest (tests/test_hostile.sh holds the regression tests of what this found).
set -u
OSN=${1:?usage: probe.sh PATH_TO_osn REPO_ROOT}
ROOT=${2:?usage: probe.sh PATH_TO_osn REPO_ROOT}
EX=$ROOT/examples
T=$(mktemp -d "${TMPDIR:-/tmp}/osn_probe.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
n=0

# c WANT NEEDLE ARGS...: WANT is 0 or 2; NEEDLE must appear in stderr (for 2) ("" = any).
c() {
    local want=$1 needle=$2
    shift 2
    n=$((n + 1))
    timeout 30 "$OSN" "$@" >out 2>err </dev/null
    local got=$? msg verdict
    msg=$(head -c 160 err | tr '\n|' '  ')
    if [ "$got" -eq "$want" ] && { [ -z "$needle" ] || grep -qF -- "$needle" err; }; then
        verdict="ok"
    else
        verdict="FINDING"
    fi
    if [ "$got" -ne 0 ] && [ "$got" -ne 2 ]; then verdict="FINDING"; fi
    printf '| %d | `%s` | exit %s%s | %s: exit %s %s |\n' "$n" "$(printf '%q ' "$@" | cut -c1-110 | sed 's/|/\\|/g')" \
        "$want" "${needle:+, names $needle}" "$verdict" "$got" "$(printf '%s' "$msg" | sed 's/`/'"'"'/g')"
}

printf '[arrivals]\nrate = 1\n[arrivals]\nrate = 2\n' >dup_section.ini
printf '[arrivals]\nrate\n' >nokey.ini
printf '[arrivals]\n= 3\n' >noname.ini
printf '[Arrivals ]\nRATE = 1.1\n' >case.ini
printf '[arrivals]\nrate = 0x1p0\n' >hex.ini
printf '[arrivals]\nrate = 1e-320\n' >subnormal.ini
printf '[arrivals]\nrate = 1,5\n' >comma.ini
printf '[arrivals]\nrate = "1.2"\n' >quoted.ini
printf '[thresholds]\nR = 20.5\n' >realR.ini
printf '[thresholds]\nR = 1e3\n' >expR.ini
printf '[thresholds]\nR = 99999999999999999999\n' >hugeR.ini
printf '[thresholds]\nL = -1\n' >negL.ini
printf '[thresholds]\nL = +3\n' >plusL.ini
printf '[service]\nlaw = erlang\nk = 0\n' >k0.ini
printf '[service]\nlaw = erlang\nk = 2000000\n' >kbig.ini
printf '[service]\nlaw = hyperexp\nprobs = 0.5, 0.5\nrates = 1\n' >hyper_mismatch.ini
printf '[service]\nlaw = hyperexp\nprobs = 0.5, 0.6\nrates = 1, 2\n' >hyper_sum.ini
printf '[service]\nlaw = uniform\ncv = 0.9\n' >uni.ini
printf '[service]\nlaw = lognormal\ncv = 0.5\nsigma = 0.5\n' >cvsigma.ini
printf '[service]\nlaw = empirical\n' >emp_nofile.ini
printf '[service]\nlaw = empirical\nfile = .\n' >emp_dir.ini
printf '1\n-2\n' >neg_samples.txt
printf '[service]\nlaw = empirical\nfile = neg_samples.txt\n' >emp_neg.ini
printf '1\nnan\n' >nan_samples.txt
printf '[service]\nlaw = empirical\nfile = nan_samples.txt\n' >emp_nan.ini
printf '# only a comment\n' >empty_samples.txt
printf '[service]\nlaw = empirical\nfile = empty_samples.txt\n' >emp_empty.ini
printf '[model]\nkind = bi-level\n[thresholds]\nL1 = 3\nH1 = 2\n' >bi_bad.ini
printf '[model]\npolicy = III\n' >policy.ini
printf '[model]\nkind = two-loop\n[arrivals]\nprocess = mmpp\nphase_rates = 1, 2\nphase_switch = 0.1\n' >mmpp_short.ini
printf '[model]\nkind = two-loop\n[arrivals]\nprocess = mmpp\nphase_rates = 1, 2\nphase_switch = 0, 0\n' >mmpp_zero.ini
printf '3\n2\n1\n' >desc_trace.txt
printf '[arrivals]\nprocess = trace\nfile = desc_trace.txt\n[sim]\nwarmup = 0\n' >trace_desc.ini
printf '[sim]\ntime = 0\n' >simtime0.ini
printf '[sim]\nreplications = 1\n' >rep1.ini
printf '[sim]\nwarmup = -1\n' >warm_neg.ini
printf '[sim]\nlevel = 1\n' >level1.ini
printf '[optimize]\nmax_loss = -0.1\n' >opt_neg.ini
printf '[optimize]\nobjective = T_cyc\n' >opt_obj.ini
printf '[optimize]\nmax_loss = nan\n' >opt_nan.ini
printf '[fluid]\nslot = 0\n' >fl_slot0.ini
printf '[fluid]\nslot = 1\n' >fl_slot_t1.ini
printf '[fluid]\nhorizon = 1e-9\n' >fl_hor.ini
printf '[fluid]\nretransmissions = 7\n' >fl_retx.ini
printf '[profile]\nshape = zigzag\n' >fl_shape.ini
printf '[profile]\nshape = step\nburst_rate = 5\n' >fl_step_burst.ini
printf '[server]\nbuffer = -1\n' >fl_buf.ini
printf '[control]\nkind = rtd\ntarget = 10\n' >fl_target.ini
printf '[control]\nkp = 1\n' >fl_kp_noalgo.ini
printf '[net]\ntopology = ring\n' >net_topo.ini
printf '[net]\nedges = 0\n' >net_edges0.ini
printf '[net]\nedges = 65\n' >net_edges65.ini
printf '[net]\nreplications = 0\n' >net_rep0.ini
printf '[net]\nlevel = 1.5\n' >net_level.ini
printf '[source]\nhold = 0\n' >net_hold0.ini
printf '[source]\nprocess = mmpp\nmmpp_rates = 1\n' >net_mmpp1.ini
printf '[source]\nprocess = profile\nsteps = 1 10, 1 20\n' >net_steps_eq.ini
printf '[source]\nprocess = profile\nsteps = 1 10 5\n' >net_steps_odd.ini
printf '[server core]\nbuffer = 0\n' >net_buf0.ini
printf '[server core]\ncost_law = gamma\n' >net_costlaw.ini
printf '[control]\nkind = loss\ntarget = 0\n' >net_target0.ini
printf '[sip]\nclient_mode = sipp\nrfc6026 = maybe\n' >net_rfc.ini
printf '[node]\nelement = proxy\n' >node_elem.ini
printf '[node]\nelement = core\n' >node_nohop.ini
printf '[node]\nlisten = 999.1.1.1:5060\n' >node_listen.ini
printf '[node]\nlisten = 127.0.0.1:99999\n' >node_port.ini
printf '[node]\nduration = -1\n' >node_dur.ini
printf '[node]\nstats_interval = 0\n' >node_stats.ini
printf '[node]\nmax_transactions = 0\n' >node_maxtx.ini
printf '[node]\nmetrics = nowhere\n' >node_metrics.ini
printf '[net]\ntime = 5\n[node]\nelement = uas\n' >node_nettime.ini
mkfifo fifo.ini
ln -s nowhere.ini dangling.ini
printf '\xef\xbb\xbf[arrivals]\r\nrate = 1.1\r\n' >bom_crlf.ini
printf '[arrivals]\nrate = 1.1 ; comment\n' >inline_comment.ini
printf '[arrivals]\nrate = 1.1 # comment\n' >hash_comment.ini
printf '[arrivals]\n  rate = 1.1\n' >indented.ini
printf '[arrivals\nrate = 1\n' >unclosed.ini
printf '[]\nrate = 1\n' >empty_section.ini
printf '[arrivals]\nrate = \xff\xfe\n' >latin.ini

# ---- solve ----
c 2 "arrivals" solve dup_section.ini
c 2 "nokey.ini:2" solve nokey.ini
c 2 "noname.ini:2" solve noname.ini
c 0 "" solve case.ini -q
c 0 "" solve hex.ini -q # a C hex float is a number
c 0 "" solve subnormal.ini -q # positive: solved in extended range
c 2 "arrivals.rate" solve comma.ini
c 2 "arrivals.rate" solve quoted.ini
c 2 "thresholds.R" solve realR.ini
c 2 "thresholds.R" solve expR.ini
c 2 "thresholds.R" solve hugeR.ini
c 2 "thresholds.L" solve negL.ini
c 0 "" solve plusL.ini -q
c 2 "service.k" solve k0.ini
c 2 "" solve kbig.ini
c 2 "service.rates" solve hyper_mismatch.ini
c 2 "service.probs" solve hyper_sum.ini
c 2 "service.cv" solve uni.ini
c 2 "service.sigma" solve cvsigma.ini
c 2 "service.file" solve emp_nofile.ini
c 2 "service.file" solve emp_dir.ini
c 2 "neg_samples.txt:2" solve emp_neg.ini
c 2 "nan_samples.txt:2" solve emp_nan.ini
c 2 "service.file" solve emp_empty.ini
c 2 "thresholds.H1" solve bi_bad.ini
c 2 "model.policy" solve policy.ini
c 2 "arrivals.phase_switch" solve mmpp_short.ini
c 2 "arrivals.phase_switch" solve mmpp_zero.ini
c 2 "trace" solve trace_desc.ini
c 2 "--method" solve --method ''
c 2 "--json" solve --json ''
c 2 "" solve --json
c 2 "--set" solve --set
c 2 "--set" solve --set =1
c 2 "--set" solve --set .rate=1
c 2 "--set" solve --set arrivals.=1
c 2 "arrivals.rate" solve --set arrivals.rate=
c 2 "arrivals.rate" solve --set 'arrivals.rate=1 2'
c 2 "arrivals.rate" solve --set arrivals.rate=-0
c 2 "arrivals.rate" solve --set arrivals.rate=1e309
c 2 "arrivals.rate" solve --set arrivals.rate=infinity
(printf '[arrivals]\nrate = 1.1\n' >fifo.ini &)
c 0 "" solve fifo.ini -q # a FIFO with a writer is read like a file
c 2 "dangling.ini" solve dangling.ini
c 2 "" solve /
c 2 "" solve /etc/shadow-does-not-exist
c 0 "" solve bom_crlf.ini -q
c 0 "" solve inline_comment.ini -q
c 2 "arrivals.rate" solve hash_comment.ini
c 0 "" solve indented.ini -q
c 2 "unclosed.ini:1" solve unclosed.ini
c 2 "empty_section.ini:1" solve empty_section.ini
c 2 "arrivals.rate" solve latin.ini
c 2 "" solve -- --help
c 2 "--dist" solve --dist /proc/version
c 2 "--json" solve --json /proc/self/status
c 2 "--csv" solve --csv "$T"
c 2 "thresholds.R" solve --set thresholds.R=1 --set thresholds.H=0 --set thresholds.L=0
c 2 "" solve --set model.kind=single-loop --set thresholds.B=0
c 2 "arrivals.flows" solve --set arrivals.flows=3
c 2 "" solve --set arrivals.flows=2 --set arrivals.rate1=0 --set arrivals.rate2=0
# ---- optimize ----
c 2 "optimize.max_loss" optimize opt_neg.ini
c 2 "optimize.objective" optimize opt_obj.ini
c 2 "optimize.max_loss" optimize opt_nan.ini
c 2 "optimize.max_cycle" optimize --set optimize.max_cycle=1
c 2 "--plot" optimize --set thresholds.R=3 --plot -
c 2 "--grid" optimize --grid - --json -
c 0 "" optimize --set thresholds.R=2 -q
c 2 "thresholds.R" optimize --set thresholds.R=1
c 2 "" optimize --set optimize.min_cycle=-inf
c 0 "" optimize --set thresholds.R=5 --set optimize.max_throttle=0 -q
c 2 "--grid" optimize --set thresholds.R=5 --grid /proc/version
c 2 "" optimize "$EX/optimize/bi_level.ini" --set thresholds.H2=1
c 0 "" optimize --set thresholds.R=6 --set service.law=det -q
c 2 "trace" optimize --set arrivals.process=trace --set arrivals.file=desc_trace.txt
# ---- sim (node) ----
c 2 "sim.time" sim simtime0.ini
c 0 "" sim rep1.ini -q # one replication: values, +- n/a
c 2 "sim.warmup" sim warm_neg.ini
c 2 "sim.level" sim level1.ini
c 2 "--seed" sim --seed -1
c 2 "--seed" sim --seed 1.5
c 2 "--replications" sim --replications 0
c 2 "--threads" sim --threads 0
c 2 "--threads" sim --threads 100000
c 2 "sim.feedback_delay" sim --set sim.feedback_delay=-1
c 2 "sim.feedback_delay" sim --set sim.feedback_delay=inf
c 2 "" sim trace_desc.ini
c 0 "" sim --set sim.time=10 --set sim.warmup=0 --set sim.replications=2 -q
# ---- sim (network) ----
c 2 "net.topology" sim net_topo.ini
c 2 "net.edges" sim net_edges0.ini
c 2 "net.edges" sim net_edges65.ini
c 2 "net.replications" sim net_rep0.ini
c 2 "net.level" sim net_level.ini
c 2 "source.hold" sim net_hold0.ini
c 2 "source.mmpp_rates" sim net_mmpp1.ini
c 2 "source.steps" sim net_steps_eq.ini
c 2 "source.steps" sim net_steps_odd.ini
c 2 "server core.buffer" sim net_buf0.ini
c 2 "server core.cost_law" sim net_costlaw.ini
c 2 "control.target" sim net_target0.ini
c 2 "sip.rfc6026" sim net_rfc.ini
c 2 "net.time" sim "$EX/collapse.ini" --set net.time=0
c 2 "net.time" sim "$EX/collapse.ini" --set net.time=1e300
c 2 "net.warmup" sim "$EX/collapse.ini" --set net.warmup=nan
c 2 "source.rate" sim "$EX/collapse.ini" --set source.rate=1:2:0
c 2 "" sim "$EX/collapse.ini" --set source.rate=1:1e9:1
c 2 "" sim "$EX/collapse.ini" --set source.rate=1:2:1 --set source.hold=1:2:1
c 2 "server core.cost_invite" sim "$EX/collapse.ini" --set 'server core.cost_invite=-1'
c 2 "link access.delay" sim "$EX/collapse.ini" --set 'link access.delay=inf'
c 2 "sip.t4" sim "$EX/collapse.ini" --set sip.t4=0
c 2 "sip.timer_d" sim "$EX/collapse.ini" --set sip.timer_d=-1
c 2 "control.l1" sim "$EX/collapse.ini" --set control.kind=local --set control.l1=5 --set control.h1=1
c 2 "--trace-interval" sim "$EX/collapse.ini" --trace - --trace-interval 0
c 2 "--trace" sim "$EX/collapse.ini" --trace - --json -
c 2 "net.trace_interval" sim "$EX/collapse.ini" --set net.trace_interval=1e-12 --trace t.csv
c 2 "source.burst_factor" sim "$EX/burst.ini" --set source.burst_factor=-1
c 2 "source.rate" sim "$EX/burst.ini" --set source.rate=1e300
# ---- fluid ----
c 2 "fluid.slot" fluid fl_slot0.ini
c 2 "fluid.slot" fluid fl_slot_t1.ini
c 2 "fluid.horizon" fluid fl_hor.ini
c 2 "fluid.retransmissions" fluid fl_retx.ini
c 2 "profile.shape" fluid fl_shape.ini
c 2 "profile.burst_rate" fluid fl_step_burst.ini
c 2 "server.buffer" fluid fl_buf.ini
c 2 "control.target" fluid fl_target.ini
c 2 "control.kp" fluid fl_kp_noalgo.ini
c 2 "--csv" fluid --csv - --json -
c 2 "--plot" fluid --plot "$T"
c 2 "server.rate" fluid --set server.rate=1e-300
c 2 "profile.slowdown_factor" fluid --set profile.shape=slowdown --set profile.slowdown_factor=2
c 2 "fluid.topology" fluid --set fluid.topology=mesh
c 0 "" fluid --set fluid.horizon=1 -q
# ---- node (scenario and flag errors only; nothing is run) ----
c 2 "node.element" node node_elem.ini
c 2 "node.next_hop" node node_nohop.ini
c 2 "node.listen" node node_listen.ini
c 2 "node.listen" node node_port.ini
c 2 "node.duration" node node_dur.ini
c 2 "node.stats_interval" node node_stats.ini
c 2 "node.max_transactions" node node_maxtx.ini
c 2 "node.metrics" node node_metrics.ini
c 2 "--json" node --json
c 2 "" node --frobnicate
c 2 "" node /dev/null/x
c 2 "server uas.buffer" node --set 'server uas.buffer=0' --set node.duration=0.1 --set node.listen=127.0.0.1:0
c 2 "control.kind" node --set control.kind=magic --set node.duration=0.1 --set node.listen=127.0.0.1:0
echo "($n cases)" >&2
