# Tests of `osn node` on the wire against real peers (SIPp, Kamailio; scripts/deps.sh installs
# them), all on 127.0.0.1, each bounded in calls and time, killing only what it started.
# include(tests/node.cmake) once src/node exists: the scripts fail while `osn node` is missing
# (OSN_NODE_STANDIN=1 runs them against stand-ins instead, to check the harness itself).
# RUN_SERIAL: they generate load; two at once on a 2-core machine would measure each other.
# The long versions (2,000-call interop, 60 s overload runs, reliability, the sim-vs-real
# table) are run by `make testbed`, not here.
# A load test (nl_init --load, tests/node/lib.sh) first waits for the machine-wide load-test
# lock, up to NL_LOCK_WAIT s, while another checkout's load test, make testbed or make bench
# holds it; only then does its own watchdog start. Its CTest TIMEOUT is that wait plus its run,
# and CTest passes it the wait, so that a test waiting its turn is never killed before it gets
# the lock: after OSN_NODE_LOCK_WAIT s it gives up itself, saying the lock is still held.
set(OSN_NODE_LOCK_WAIT 1800 CACHE STRING "seconds a load test waits for the load-test lock")
function(osn_load_test name run_s)
  math(EXPR timeout "${OSN_NODE_LOCK_WAIT} + ${run_s}")
  set_tests_properties(${name} PROPERTIES TIMEOUT ${timeout} RUN_SERIAL TRUE LABELS node
                       ENVIRONMENT "NL_LOCK_WAIT=${OSN_NODE_LOCK_WAIT}")
endfunction()

add_test(NAME node_interop
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_node_interop.sh $<TARGET_FILE:osn>
                 ${CMAKE_SOURCE_DIR} --short)
osn_load_test(node_interop 300)

add_test(NAME node_rfc4475
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_node_rfc4475.sh $<TARGET_FILE:osn>
                 ${CMAKE_SOURCE_DIR})
set_tests_properties(node_rfc4475 PROPERTIES TIMEOUT 900 RUN_SERIAL TRUE LABELS node)

# One load (3x the core's capacity), one control (loss), 5 s warm-up + 20 s window.
add_test(NAME node_overload
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_node_overload.sh $<TARGET_FILE:osn>
                 ${CMAKE_SOURCE_DIR} --control loss --load 3 --warm 5 --window 20)
osn_load_test(node_overload 240)

# TCP (issue 34): SIPp -t t1 and -t tn through an edge to a uas, all over TCP, every call in
# SIPp's counts and no retransmission; framing (Content-Length), a next hop's connection refused,
# reopened and lost (408 at once), hostile peers and 1,000 idle connections (tests/node/tcp.py).
add_test(NAME node_tcp
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_node_tcp.sh $<TARGET_FILE:osn>
                 ${CMAKE_SOURCE_DIR})
set_tests_properties(node_tcp PROPERTIES TIMEOUT 300 RUN_SERIAL TRUE LABELS node)
if(OSN_SANITIZE) # tests/node/tcp.py: ASan's quarantine adds to the node's peak RSS
  set_tests_properties(node_tcp PROPERTIES ENVIRONMENT "OSN_SANITIZED=1")
endif()

# The node's own outputs: one call by hand, the Prometheus endpoint scraped during the run, the
# --stats CSV and the --json summary (no load; runs in both builds).
add_test(NAME node_metrics COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_node_metrics.sh $<TARGET_FILE:osn>)
set_tests_properties(node_metrics PROPERTIES TIMEOUT 60 LABELS node)

# The metrics endpoint as HTTP (200/404/405, HEAD, the exposition text), 500 scrapes in a row
# without a failure, and scrapers that vanish (reset, connect-and-close, idle sockets dropped at
# once, a trickled request: the node once died of SIGPIPE, issue 28), hog one address's share,
# or hold more than the connection limit idle or trickling (issue 35): the node lives, answers
# SIP meanwhile, and the next scrape is answered once the timeouts have freed a slot. About 35 s.
add_test(NAME node_metrics_hostile
         COMMAND python3 ${CMAKE_SOURCE_DIR}/tests/node/metrics_hostile.py $<TARGET_FILE:osn>)
set_tests_properties(node_metrics_hostile PROPERTIES TIMEOUT 120 LABELS node)
# The throttle gauge against a next hop's RFC 7339 feedback; docs/node.md's list of series.
add_test(NAME node_metrics_gauge
         COMMAND python3 ${CMAKE_SOURCE_DIR}/tests/node/metrics_gauge.py $<TARGET_FILE:osn>
                 ${CMAKE_SOURCE_DIR})
set_tests_properties(node_metrics_gauge PROPERTIES TIMEOUT 120 LABELS node)
# RFC 7339 feedback from a stray response: a stranger's forged oc=100 throttles nothing; a next
# hop's own late answer still feeds its client half (one next hop, then two).
add_test(NAME node_stray_feedback
         COMMAND python3 ${CMAKE_SOURCE_DIR}/tests/node/stray_feedback.py $<TARGET_FILE:osn>)
set_tests_properties(node_stray_feedback PROPERTIES TIMEOUT 120 LABELS node)

# Every transaction ends: calls that succeed, a dead next hop (408), Max-Forwards 0 (483), a
# flood against max_transactions (503), a caller that never ACKs; then the node holds none.
# The node once leaked the client transaction of every 408 (issue 28).
add_test(NAME node_txn_end
         COMMAND python3 ${CMAKE_SOURCE_DIR}/tests/node/txn_end.py $<TARGET_FILE:osn>)
set_tests_properties(node_txn_end PROPERTIES TIMEOUT 120 LABELS node)

# Transactions in their final wait, kept compact (issue 34): a copy reaching one gets byte for
# byte what the live transaction sent (uas 200 and 481, an edge's ACK of a 486 again, a 200
# relayed again, a BYE's 200 again), INVITE copies in Confirmed and Accepted are absorbed; a
# uas's INVITE kept once its 2xx is acked, and INVITE and ACK copies after that absorbed; the
# cap derived from max_memory. No load, about 5 s.
add_test(NAME node_kept
         COMMAND python3 ${CMAKE_SOURCE_DIR}/tests/node/kept.py $<TARGET_FILE:osn>)
set_tests_properties(node_kept PROPERTIES TIMEOUT 120 LABELS node)
# The resident memory per kept transaction at 2,000 calls/s for 10 s (/proc VmRSS), the node's
# own count beside it. Not in a sanitized build: ASan's shadow memory and its quarantine of freed
# blocks make VmRSS grow about 6 KB a transaction there (measured: 5,943 bytes), whatever the
# node keeps.
if(NOT OSN_SANITIZE)
  add_test(NAME node_kept_rss
           COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_node_kept.sh $<TARGET_FILE:osn>
                   ${CMAKE_SOURCE_DIR})
  osn_load_test(node_kept_rss 300)
endif()

# Port 0 (issue 35): the node binds a port the kernel chooses, prints it on its listening line
# and serves on it (uas and edge, Via sent-by, the JSON's listen); no load.
add_test(NAME node_port0 COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_node_port0.sh $<TARGET_FILE:osn>)
set_tests_properties(node_port0 PROPERTIES TIMEOUT 60 LABELS node)

# The per-source budget (issue 28): a flood of 100 forged INVITEs from one address brings back
# less than it sent with node.per_source_rate = 2 (about 11 times more without it), at a uas,
# an edge before a uas and an edge toward a dead next hop; short timers, about 15 s.
add_test(NAME node_amplify
         COMMAND python3 ${CMAKE_SOURCE_DIR}/tests/node/amplify.py $<TARGET_FILE:osn>)
set_tests_properties(node_amplify PROPERTIES TIMEOUT 120 LABELS node)

# RFC answers (issue 28): 481 for a BYE or CANCEL of no call at the uas, 482 for a request that
# loops between two edges (through a UDP relay: port 0 everywhere), 513 for a forward too large
# for UDP; every transaction ends. Short timers, about 10 s.
# CANCEL from a SIPp uac to a SIPp uas that rings and never answers (issue 33), through edge ->
# core, edge -> Kamailio and Kamailio -> edge -> core: 200 hop by hop, the CANCEL on the
# INVITE's branch, 487 back, every message in both SIPp ends' counts, every node's transactions
# ended. About 30 s.
add_test(NAME node_cancel
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_node_cancel.sh $<TARGET_FILE:osn>
                 ${CMAKE_SOURCE_DIR})
set_tests_properties(node_cancel PROPERTIES TIMEOUT 180 LABELS node)

# CANCEL against osn node's uas that rings 3 s ([server uas] ring_delay): through edge and
# Kamailio (CANCEL after the 180), and through edge and a busy core (CANCEL at the edge's 100,
# kept by the edge until the core's 100, RFC 3261 9.1): 200 and 487 from the uas, every message
# in SIPp's counts and each node's counters.
add_test(NAME node_cancel_ring
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_node_cancel_ring.sh $<TARGET_FILE:osn>
                 ${CMAKE_SOURCE_DIR})
set_tests_properties(node_cancel_ring PROPERTIES TIMEOUT 200 LABELS node)

add_test(NAME node_rfc_answers
         COMMAND python3 ${CMAKE_SOURCE_DIR}/tests/node/rfc_answers.py $<TARGET_FILE:osn>)
set_tests_properties(node_rfc_answers PROPERTIES TIMEOUT 120 LABELS node)

# A next hop that refuses (ICMP port unreachable) is said on stderr within a second and counted
# (next_hop_unreachable), not silently retransmitted to (issues 34, 35).
add_test(NAME node_unreachable
         COMMAND python3 ${CMAKE_SOURCE_DIR}/tests/node/unreachable.py $<TARGET_FILE:osn>)
set_tests_properties(node_unreachable PROPERTIES TIMEOUT 120 LABELS node)
add_test(NAME node_peer_gone
         COMMAND python3 ${CMAKE_SOURCE_DIR}/tests/node/peer_gone.py $<TARGET_FILE:osn>)
set_tests_properties(node_peer_gone PROPERTIES TIMEOUT 120 LABELS node)
add_test(NAME node_tcp_workers_via
         COMMAND python3 ${CMAKE_SOURCE_DIR}/tests/node/tcp_workers_via.py $<TARGET_FILE:osn>)
set_tests_properties(node_tcp_workers_via PROPERTIES TIMEOUT 120 LABELS node)
add_test(NAME node_key_ranges
         COMMAND python3 ${CMAKE_SOURCE_DIR}/tests/node/key_ranges.py $<TARGET_FILE:osn>)
set_tests_properties(node_key_ranges PROPERTIES TIMEOUT 120 LABELS node)

# The scenario's link delays carried out by the node (issue 30): 50 ms links add 50 ms to the
# 100 Trying and 150 ms to the 180 through an edge and a uas, against a baseline without; a full
# delay line loses and counts (link_dropped); bad values exit 2 naming the key. About 10 s.
add_test(NAME node_link_delay
         COMMAND python3 ${CMAKE_SOURCE_DIR}/tests/node/link_delay.py $<TARGET_FILE:osn>)
set_tests_properties(node_link_delay PROPERTIES TIMEOUT 120 LABELS node)

# A real softphone (issue 33): baresip calls through edge -> core -> uas, the call is
# established and baresip hangs up; and a UAC calls baresip through edge -> core, which answers
# by itself, then again and baresip hangs up: its BYE goes up by the Record-Route set; and
# baresip calls a uas that hangs up itself (source.callee_hangs_up = 1): the uas's BYE reaches
# baresip through core and edge by the route set. Skipped (77) when baresip is not installed
# (scripts/deps.sh test installs it).
add_test(NAME node_baresip
         COMMAND python3 ${CMAKE_SOURCE_DIR}/tests/node/baresip.py $<TARGET_FILE:osn>)
set_tests_properties(node_baresip PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77 LABELS node)

# cost_cancel defaults to cost_bye (issue 33), in both worlds: osn sim's resolved scenario for
# every [server] of fanout.ini, and an osn node uas's CPU time for 10 CANCELs answered 481 (10 x
# cost_bye, not cost_invite) and its scenario_resolved. About 3 s.
add_test(NAME node_cost_cancel
         COMMAND python3 ${CMAKE_SOURCE_DIR}/tests/node/cost_cancel.py $<TARGET_FILE:osn>
                 ${CMAKE_SOURCE_DIR})
set_tests_properties(node_cost_cancel PROPERTIES TIMEOUT 120 LABELS node)

# The callee's BYE goes up through an edge whose client half sheds everything (issue 33): the
# callee, a socket playing an RFC 7339 server, answers the INVITE with oc=100 (loss); its BYE then
# reaches the caller's Contact by the edge's Record-Route, not answered 503, while a new INVITE
# and the caller's BYE (down) are shed. Short timers, a few seconds.
add_test(NAME node_callee_bye
         COMMAND python3 ${CMAKE_SOURCE_DIR}/tests/node/callee_bye.py $<TARGET_FILE:osn>)
set_tests_properties(node_callee_bye PROPERTIES TIMEOUT 120 LABELS node)

# What the uas answers as a user agent (issue 33): Contact in its 180 and 200, the SDP answer
# (first codec, inactive), Allow/Accept/Supported to OPTIONS, 405 with Allow, 481 in no dialog,
# 488 for a malformed offer, 415 for a body not SDP. Short timers, a few seconds.
add_test(NAME node_uas_answers
         COMMAND python3 ${CMAKE_SOURCE_DIR}/tests/node/uas_answers.py $<TARGET_FILE:osn>)
set_tests_properties(node_uas_answers PROPERTIES TIMEOUT 120 LABELS node)

# IPv6 on [::1]: a SIPp -> edge -> uas chain, the forwarded Via read by OSN's parser and
# libosip2 (test_sip_osip FILE), a dialog through edge -> core by its Record-Route set both ways
# ([::1] in brackets), the uas's Contact and SDP, bad addresses (exit 2). Skipped
# (exit 77) on a machine without ::1.
if(TARGET test_sip_osip)
  add_test(NAME node_ipv6
           COMMAND python3 ${CMAKE_SOURCE_DIR}/tests/node/ipv6.py $<TARGET_FILE:osn>
                   $<TARGET_FILE:test_sip_osip>)
  set_tests_properties(node_ipv6 PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77 LABELS node)
endif()

# Record-Route and loose routing through edge and core (issue 33): the caller's ACK, re-INVITE
# and ACK and the callee's BYE follow the route set both ways; with record_route = no, no
# Record-Route at all.
add_test(NAME node_route
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_node_route.sh $<TARGET_FILE:osn>
                 ${CMAKE_SOURCE_DIR})
set_tests_properties(node_route PROPERTIES TIMEOUT 180 LABELS node)

# OSN's load generator (issue 30): against SIPp's uas and through edge -> uas, every call
# accounted for; Poisson (KS) and MMPP-2 (index of dispersion) arrivals; retrials after 503.
add_test(NAME node_uacgen
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_node_uacgen.sh $<TARGET_FILE:osn>
                 ${CMAKE_SOURCE_DIR})
set_tests_properties(node_uacgen PROPERTIES TIMEOUT 200 LABELS node)

# Callers who give up (issues 30, 33): the generator's source.patience against SIPp uas that
# rings after 1 s and answers after 2 s: det patience either side of the answer (all or none
# abandoned, the CANCEL held until the 180), exponential (1 - exp(-d/m)), a 2xx that crosses
# the CANCEL (ACK, BYE). About 15 s.
add_test(NAME node_genabandon
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_node_genabandon.sh $<TARGET_FILE:osn>
                 ${CMAKE_SOURCE_DIR})
set_tests_properties(node_genabandon PROPERTIES TIMEOUT 150 LABELS node)

# Overload with callers who give up and try again, three ways (issue 33): generator -> edge ->
# core -> uas, all osn node, beside osn sim on examples/node_collapse.ini at 3x, patience exp
# 4 s, retry_prob 0.5 honouring Retry-After; goodput within 15%. One control (loss), 5 + 20 s,
# about 70 s; make testbed runs none, loss and rate with a 35 s warm-up.
add_test(NAME node_abandon_sim
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_node_abandon_sim.sh $<TARGET_FILE:osn>
                 ${CMAKE_SOURCE_DIR} --controls loss --warm 5 --window 20)
osn_load_test(node_abandon_sim 240)

# docs/guide.md step 5 (issue 35): the guide's thresholds on the wire, osn testbed on
# examples/guide/kamailio-wire.ini (1.2x, local control): real goodput within 10% of osn sim's,
# the core's control acted and its buffer dropped at most 0.5%. About 25 s.
add_test(NAME guide_wire
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_guide_wire.sh $<TARGET_FILE:osn>
                 ${CMAKE_SOURCE_DIR})
set_tests_properties(guide_wire PROPERTIES TIMEOUT 180 RUN_SERIAL TRUE LABELS node)

# osn testbed (issue 30): examples/node_collapse.ini for real (every element an osn node on
# 127.0.0.1, ports read from the nodes) beside osn sim at 1x under loss: real goodput within 10%,
# every summary collected, no process left by pid, SIGTERM stops everything, bad flags exit 2;
# tandem and fanin wired as the simulator wires them. About 25 s.
add_test(NAME testbed
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_testbed.sh $<TARGET_FILE:osn>
                 ${CMAKE_SOURCE_DIR})
osn_load_test(testbed 180)

# osn testbed on a fan-out (examples/fanout.ini: cores of 200 and 100 calls/s, each its own osn
# node, the edge given next_hop = CORE, CORE2) at 1.5x under loss: real goodput within 15% of
# the simulator's and of the cores' 300 calls/s, the slower core's share of the INVITEs in
# [0.28, 0.40] and near the simulator's; examples/mesh.ini wired edge by edge. About 60 s. A
# load test: not in a sanitized build, whose generator falls behind at 450 calls/s (measured:
# 129 ms of lag, 213 of 300 calls/s), as make test-asan leaves out the other load tests.
if(NOT OSN_SANITIZE)
  add_test(NAME testbed_fanout
           COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_testbed_fanout.sh $<TARGET_FILE:osn>
                   ${CMAKE_SOURCE_DIR})
  osn_load_test(testbed_fanout 260)
endif()

# osn testbed: the generator's setup delays over the window only (node.warmup; a profile whose
# warm-up is 9x its window's rate: the samples are the window's Poisson count), and --loads for
# profile and MMPP-2 sources (every rate times one factor; offered within 20-25% of the row's
# rate, real and simulated). About 50 s.
add_test(NAME testbed_window
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_testbed_window.sh $<TARGET_FILE:osn>
                 ${CMAKE_SOURCE_DIR})
osn_load_test(testbed_window 260)

# osn testbed and osn node on topologies the user wrote: a chain (examples/ims_chain.ini: six
# proxies, four of them mids) with every element a node named as in the file (node.name),
# every call through every proxy, real goodput within 15% of the simulator's, each mid's own
# costs (the CPU a call costs each proxy, against the closed form, within 1%); fan-ins
# whose sources give their own rates (each generator its share), one into first proxies of
# costs of their own (each its closed form); a link of its own refused; node.name and
# node.mid by hand and their bad values (exit 2). About 60 s.
add_test(NAME testbed_written
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_testbed_written.sh $<TARGET_FILE:osn>
                 ${CMAKE_SOURCE_DIR})
osn_load_test(testbed_written 320)

# osn testbed under mpirun -n 3 (element i on rank i mod 3, addresses exchanged through MPI,
# results gathered at rank 0) beside the same run in one process: every summary, the proxies'
# ends from ranks 1 and 2, the same simulation, real goodput within 10% of each other and of
# the simulator's; placement by [node] rank (core:2, edge:1). Only when osn is built with MPI.
# About 70 s.
if(OSN_MPIRUN AND MPI_C_FOUND AND OSN_MPI)
  add_test(NAME testbed_mpi
           COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_testbed_mpi.sh $<TARGET_FILE:osn>
                   ${CMAKE_SOURCE_DIR} ${OSN_MPIRUN})
  osn_load_test(testbed_mpi 330)
endif()

# Several next hops (issue 33): an edge with next_hop = A, B before two osn node uas: the split
# by weight (3:1 within one round), per-server counts in the JSON and the metrics, the BYEs by
# Route; over IPv6, one uas killed: failover, one down mark, every call good; bad lists exit 2.
add_test(NAME node_fanout
         COMMAND python3 ${CMAKE_SOURCE_DIR}/tests/node/fanout.py $<TARGET_FILE:osn>
                 ${CMAKE_SOURCE_DIR})
set_tests_properties(node_fanout PROPERTIES TIMEOUT 180 LABELS node)

# Workers (issue 34): SIPp (a socket per call) through an edge of 2 workers to a uas of 2
# workers, 1,000 calls: every call in SIPp's statistics and in the summed JSON, both workers
# used, no response lost to the wrong worker, the JSON's sums equal to the workers' counts and
# to the metrics; copies of an INVITE absorbed by the worker that owns it. About 20 s.
add_test(NAME node_workers
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_node_workers.sh $<TARGET_FILE:osn>
                 ${CMAKE_SOURCE_DIR})
osn_load_test(node_workers 420)

# The load tests' TIMEOUT covers their wait for the load-test lock (osn_load_test above): CTest
# never kills one still waiting its turn. Reads `ctest --show-only`; no load, a second.
add_test(NAME node_lock_timeout
         COMMAND python3 ${CMAKE_SOURCE_DIR}/tests/node/lock_timeout.py ${CMAKE_BINARY_DIR}
                 ${CMAKE_SOURCE_DIR})
set_tests_properties(node_lock_timeout PROPERTIES TIMEOUT 60 LABELS node)

# The generator's rates over the window after node.warmup (issue 30): a burst in the warm-up
# (600 calls/s for 3 s, then 150), the rates of [3, 7] s against its --trace and Poisson bounds,
# the whole run's apart. About 20 s.
add_test(NAME node_genwindow
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_node_genwindow.sh $<TARGET_FILE:osn>
                 ${CMAKE_SOURCE_DIR})
set_tests_properties(node_genwindow PROPERTIES TIMEOUT 150 LABELS node)

# The callee's memory budget sized for a rate (issue 30, tests/node/lib.sh nl_uas_sized): a
# scaled-down generators' race (T1 = 20 ms, 1,500 calls/s for 5 s) refuses no call at the sized
# uas, and a uas with 1 MiB and waits longer than the run (T1 = 0.1 s) refuses some (what
# refused 222,662 calls at 32,000 calls/s). About 15 s.
# The node's virtual CPU in nominal time: a uas's busy time equals the costs of the messages
# it served within 1% (each service ends at its nominal end, not when the loop handled it).
# About 15 s.
add_test(NAME node_busy
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_node_busy.sh $<TARGET_FILE:osn>
                 ${CMAKE_SOURCE_DIR})
set_tests_properties(node_busy PROPERTIES TIMEOUT 120 LABELS node)

add_test(NAME node_uassized
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_node_uassized.sh $<TARGET_FILE:osn>
                 ${CMAKE_SOURCE_DIR})
set_tests_properties(node_uassized PROPERTIES TIMEOUT 120 LABELS node)

# The generator with several next hops (issue 30): two uas with weights 3, 1 (shares within
# binomial limits, every call and BYE on its server) and failover after a 503 with Retry-After
# (osn_elem_on_client_event_hop, the proxy's). About 25 s.
add_test(NAME node_genhops
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_node_genhops.sh $<TARGET_FILE:osn>
                 ${CMAKE_SOURCE_DIR})
set_tests_properties(node_genhops PROPERTIES TIMEOUT 150 LABELS node)

# The generator as overload-control client (issue 30, control.at = edge): generator -> edge (the
# bottleneck, loss, its server half) -> uas at 2.4x the edge's capacity: the generator sheds calls
# itself and goodput is within 15 % of the edge's capacity; without the key it sheds none.
# About 50 s.
add_test(NAME node_srcctl
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_node_srcctl.sh $<TARGET_FILE:osn>
                 ${CMAKE_SOURCE_DIR})
set_tests_properties(node_srcctl PROPERTIES TIMEOUT 180 LABELS node)

add_test(NAME node_hangup
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_node_hangup.sh $<TARGET_FILE:osn>
                 ${CMAKE_SOURCE_DIR})
set_tests_properties(node_hangup PROPERTIES TIMEOUT 180 LABELS node)
