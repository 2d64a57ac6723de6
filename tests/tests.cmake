# Unit tests (cmocka) and command-line tests, all run by CTest.
function(osn_unit_test name)
  add_executable(${name} tests/${name}.c)
  target_include_directories(${name} PRIVATE ${CMAKE_SOURCE_DIR}/src/model ${CMAKE_SOURCE_DIR}/tests)
  target_link_libraries(${name} PRIVATE osn_io PkgConfig::CMOCKA)
  target_compile_definitions(${name} PRIVATE
    OSN_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES TIMEOUT 300)
endfunction()

# The scenario core on its own: linked with osn_ini only, so the build fails if src/ini/ ever
# calls into sim, model or fluid (the arrow ini -> base of docs/design.md).
add_executable(test_ini tests/test_ini.c)
target_link_libraries(test_ini PRIVATE osn_ini PkgConfig::CMOCKA)
add_test(NAME test_ini COMMAND test_ini)
set_tests_properties(test_ini PROPERTIES TIMEOUT 60)

osn_unit_test(test_xd)
osn_unit_test(test_solve)
osn_unit_test(test_service)
osn_unit_test(test_scenario)
osn_unit_test(test_fluid)
osn_unit_test(test_rng)
osn_unit_test(test_stats)
osn_unit_test(test_des)
target_link_libraries(test_des PRIVATE osn_des)
osn_unit_test(test_sim)
osn_unit_test(test_net_topo)
target_link_libraries(test_net_topo PRIVATE osn_sim)
osn_unit_test(test_net_tree)
target_link_libraries(test_net_tree PRIVATE osn_sim)
osn_unit_test(test_net_mesh)
target_link_libraries(test_net_mesh PRIVATE osn_sim)
target_link_libraries(test_sim PRIVATE osn_sim)
# The replication runner of src/study that both simulators call, linked with osn_study alone:
# the build fails if the runner ever calls into a simulator (the arrow sim -> study).
add_executable(test_par tests/test_par.c)
target_link_libraries(test_par PRIVATE osn_study PkgConfig::CMOCKA)
add_test(NAME test_par COMMAND test_par)
set_tests_properties(test_par PROPERTIES TIMEOUT 60)
# ... and src/study includes no header of SIP, the simulators or the models.
add_test(NAME study_arrows COMMAND bash ${CMAKE_SOURCE_DIR}/tests/study_arrows.sh ${CMAKE_SOURCE_DIR})
set_tests_properties(study_arrows PROPERTIES TIMEOUT 30)
osn_unit_test(test_optimize)
# Whole grids solved twice over (the screen against the plain scan): 5 s plain, 3 min under ASan
# on a slow runner, so more than the default 300 s of room.
set_tests_properties(test_optimize PROPERTIES TIMEOUT 900)
osn_unit_test(test_embedded_share)
osn_unit_test(test_tret)
target_link_libraries(test_tret PRIVATE osn_sim)
osn_unit_test(test_ctl)
target_link_libraries(test_ctl PRIVATE osn_ctl)
osn_unit_test(test_ctl_rate_dyn)
target_link_libraries(test_ctl_rate_dyn PRIVATE osn_ctl)
osn_unit_test(test_sip)
target_link_libraries(test_sip PRIVATE osn_sip)
# The UAS's SDP answer against RFC 3264 6 (src/sip/sdp.c).
osn_unit_test(test_sip_sdp)
target_link_libraries(test_sip_sdp PRIVATE osn_sip)

add_test(NAME cli COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_cli.sh $<TARGET_FILE:osn> ${CMAKE_SOURCE_DIR})
set_tests_properties(cli PROPERTIES TIMEOUT 300)
add_test(NAME cli_sim COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_cli_sim.sh $<TARGET_FILE:osn> ${CMAKE_SOURCE_DIR})
set_tests_properties(cli_sim PROPERTIES TIMEOUT 300)
add_test(NAME cli_tret COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_cli_tret.sh $<TARGET_FILE:osn> ${CMAKE_SOURCE_DIR})
set_tests_properties(cli_tret PROPERTIES TIMEOUT 300)
add_test(NAME cli_study COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_study.sh $<TARGET_FILE:osn> ${CMAKE_SOURCE_DIR})
set_tests_properties(cli_study PROPERTIES TIMEOUT 120)
# A --precision study killed (SIGKILL) in a point's rounds and resumed; with MPI, also on 2 ranks.
set(osn_resume_mpirun "")
if(OSN_MPIRUN AND MPI_C_FOUND AND OSN_MPI)
  set(osn_resume_mpirun ${OSN_MPIRUN})
endif()
add_test(NAME cli_study_resume COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_study_resume.sh
         $<TARGET_FILE:osn> ${CMAKE_SOURCE_DIR} ${osn_resume_mpirun})
set_tests_properties(cli_study_resume PROPERTIES TIMEOUT 300)
if(OSN_MPIRUN AND MPI_C_FOUND AND OSN_MPI)
  add_test(NAME cli_study_mpi COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_study_mpi.sh
           $<TARGET_FILE:osn> ${CMAKE_SOURCE_DIR} ${OSN_MPIRUN})
  set_tests_properties(cli_study_mpi PROPERTIES TIMEOUT 300)
endif()
osn_unit_test(test_net)
target_link_libraries(test_net PRIVATE osn_sim)
# Study 09's scripted experiments in the network simulator: a server's slowdown and bulk
# arrivals, each against a closed form (tests/test_net_scripted.c).
osn_unit_test(test_net_scripted)
target_link_libraries(test_net_scripted PRIVATE osn_sim)
add_test(NAME fluid_sim COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_fluid_sim.sh $<TARGET_FILE:osn> ${CMAKE_SOURCE_DIR})
set_tests_properties(fluid_sim PROPERTIES TIMEOUT 60)
# Fan-out and mesh in the simulator (issue 33): goodput within 15% of the cores' capacities,
# the slower core's share of INVITEs following its feedback, weights honoured below capacity.
add_test(NAME sim_fanout COMMAND python3 ${CMAKE_SOURCE_DIR}/tests/sim_fanout.py $<TARGET_FILE:osn>
                                 ${CMAKE_SOURCE_DIR})
set_tests_properties(sim_fanout PROPERTIES TIMEOUT 120)
# A fan-out of 8 cores of capacity 10 k calls/s, weights k (issue 32, cores sized at run time):
# INVITE shares k / 36 and utilisation 0.5 below capacity, goodput the capacities' sum in
# overload, net.cores past 63 and a section too many or too few refused.
add_test(NAME sim_fanout_cores COMMAND python3 ${CMAKE_SOURCE_DIR}/tests/sim_fanout_cores.py
                                       $<TARGET_FILE:osn>)
set_tests_properties(sim_fanout_cores PROPERTIES TIMEOUT 120)
# Memory per live call (issue 32): the peak RSS of two fan-ins at one rate and two hold times,
# its slope over the calls held (Little's law) against the figure docs/performance.md states.
add_test(NAME sim_memory COMMAND python3 ${CMAKE_SOURCE_DIR}/tests/sim_memory.py
                                 $<TARGET_FILE:osn> ${CMAKE_SOURCE_DIR})
set_tests_properties(sim_memory PROPERTIES TIMEOUT 120)
# The network simulator's results bit for bit against tests/data/net_golden.txt.
add_executable(test_net_golden tests/test_net_golden.c)
target_link_libraries(test_net_golden PRIVATE osn_io)
add_test(NAME net_golden COMMAND test_net_golden ${CMAKE_SOURCE_DIR}/tests/data/net_golden.txt
                                 ${CMAKE_SOURCE_DIR}/examples)
set_tests_properties(net_golden PROPERTIES TIMEOUT 300)
osn_unit_test(test_elem)
target_link_libraries(test_elem PRIVATE osn_elem)
# The SIP message parser, identities and printer (RFC 4475, SIPp messages, round trips).
osn_unit_test(test_sip_parse)
target_link_libraries(test_sip_parse PRIVATE osn_sip)
osn_unit_test(test_sip_delta)
target_link_libraries(test_sip_delta PRIVATE osn_sip)
# Differential test against libosip2 (LGPL; linked into this test only, never into osn).
osn_unit_test(test_sip_osip)
target_link_libraries(test_sip_osip PRIVATE osn_sip PkgConfig::OSIP2)
# docs/scenario.md is what `osn help scenario --markdown` prints from the key tables (issue 29).
add_test(NAME docs_scenario COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_docs_scenario.sh
         $<TARGET_FILE:osn> ${CMAKE_SOURCE_DIR})
# No page says a shipped command or the node is not there yet (issue 35).
add_test(NAME docs_stale COMMAND python3 ${CMAKE_SOURCE_DIR}/tests/test_docs_stale.py
                                 $<TARGET_FILE:osn> ${CMAKE_SOURCE_DIR})
# Every tracked figure's program says what a point averages and draws its intervals (issue 35).
add_test(NAME figures COMMAND python3 ${CMAKE_SOURCE_DIR}/tests/test_figures.py ${CMAKE_SOURCE_DIR})
# make bench and make testbed write dated tables into docs/performance.md (issue 35).
add_test(NAME perf_record COMMAND python3 ${CMAKE_SOURCE_DIR}/tests/test_perf_record.py
                                  ${CMAKE_SOURCE_DIR})
# scripts/deps.sh's tiers: each make target its own; no root asked of a user who has the tier;
# Kamailio installed with no service started (shims of dpkg-query, apt-get, systemctl).
add_test(NAME deps COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_deps.sh ${CMAKE_SOURCE_DIR})
# Hostile inputs (issue 14): signals, injection, silent wrong answers, runaways, messages.
add_test(NAME hostile COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_hostile.sh $<TARGET_FILE:osn> ${CMAKE_SOURCE_DIR})
set_tests_properties(hostile PROPERTIES TIMEOUT 600)
include(${CMAKE_SOURCE_DIR}/tests/node.cmake)
# The SIP parser's fuzzer and the node's (sequences of datagrams and clock steps) for 60 s each
# (`make check` runs them through CTest; `make fuzz` runs them longer). They build with clang-16
# in their own build directory; RUN_SERIAL: the second would otherwise build the same tree.
find_program(OSN_CLANG16 clang-16)
if(OSN_FUZZ_TEST AND NOT OSN_FUZZ AND OSN_CLANG16)
  add_test(NAME fuzz_parser_60s
           COMMAND bash ${CMAKE_SOURCE_DIR}/scripts/fuzz.sh ${CMAKE_BINARY_DIR}/fuzz 60)
  set_tests_properties(fuzz_parser_60s PROPERTIES TIMEOUT 900 RUN_SERIAL TRUE)
  add_test(NAME fuzz_node_60s
           COMMAND bash ${CMAKE_SOURCE_DIR}/scripts/fuzz.sh ${CMAKE_BINARY_DIR}/fuzz 60 fuzz_node)
  set_tests_properties(fuzz_node_60s PROPERTIES TIMEOUT 900 RUN_SERIAL TRUE)
endif()
# The one-call entry points of the library (osn_solve_json, osn_optimize_json), statically
# linked so that the sanitized build checks them too.
osn_unit_test(test_json_api)

# make install staged into a temporary DESTDIR: the files, examples/c built with pkg-config
# against it and compared with `osn solve --json`, and the Python module (tests/test_python.py).
# Not in a sanitized build: its libosn needs the ASan runtime loaded first, which neither a
# plain C program nor python3 does; the plain build's run covers the install.
if(NOT OSN_SANITIZE)
  add_test(NAME install COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_install.sh ${CMAKE_BINARY_DIR}
                                ${CMAKE_SOURCE_DIR})
  set_tests_properties(install PROPERTIES TIMEOUT 300)
endif()
# Every scenario of examples/ with the command examples/README.md lists it under.
# The README's commands run as written from a clone after `make`, and print what it shows.
add_test(NAME readme COMMAND python3 ${CMAKE_SOURCE_DIR}/tests/test_readme.py ${CMAKE_BINARY_DIR}
                             ${CMAKE_SOURCE_DIR})
set_tests_properties(readme PROPERTIES TIMEOUT 600)
add_test(NAME examples COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_examples.sh $<TARGET_FILE:osn>
                               ${CMAKE_SOURCE_DIR})
set_tests_properties(examples PROPERTIES TIMEOUT 600)
# Provenance of result files (version, scenario as run, seed; same seed = same file but the
# timing block) and detector thresholds in the detector's own units.
add_test(NAME provenance COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_provenance.sh
                                 $<TARGET_FILE:osn> ${CMAKE_SOURCE_DIR})
set_tests_properties(provenance PROPERTIES TIMEOUT 300)
# --trace and --replications-out of osn sim (node and network): rows that add up to the
# estimates, per-replication means equal to the pooled ones.
add_test(NAME trace COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_trace.sh $<TARGET_FILE:osn>
                            ${CMAKE_SOURCE_DIR})
set_tests_properties(trace PROPERTIES TIMEOUT 300)

# Reduced verdicts of the studies (studies/*/README.md): each asserts its paper's claim with
# the simulator's intervals in a few seconds; `python3 studies/NN-*/study.py` regenerates the
# full study.
# They check numbers, which the plain build does; the sanitizer build (make test-asan) skips them
# rather than repeat, several times slower, code paths the unit tests already run under it.
if(NOT OSN_SANITIZE)
foreach(study 01-lboc-vs-rboc-rtt:study_lboc_rboc 02-mm1-vs-md1:study_mm1_md1
              03-optimal-thresholds:study_optimal_thresholds
              04-retransmission-collapse-pi:study_retransmission_pi 05-prsm:study_prsm
              06-bistability-map:study_bistability 07-tandem-propagation:study_tandem
              08-pi-design:study_pi_design 09-prsm-slowdown-bulk:study_prsm_slowdown_bulk
              10-fairness-clients:study_fairness_clients
              11-abandonment-retrials:study_abandonment_retrials
              12-quantile-objective:study_quantile_objective)
    string(REPLACE ":" ";" parts ${study})
    list(GET parts 0 dir)
    list(GET parts 1 name)
    add_test(NAME ${name} COMMAND python3 ${CMAKE_SOURCE_DIR}/studies/${dir}/study.py --check)
    set_tests_properties(${name} PROPERTIES TIMEOUT 120 ENVIRONMENT "OSN=$<TARGET_FILE:osn>")
endforeach()
endif()
# Common random numbers and the paired comparison of osn sim --compare.
add_test(NAME cli_sim_compare COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_sim_compare.sh $<TARGET_FILE:osn> ${CMAKE_SOURCE_DIR})
set_tests_properties(cli_sim_compare PROPERTIES TIMEOUT 120)

# The element's two drivers against each other (issue 29): scripted events through the node's
# driver (compiled in from its sources, without its socket, loop and metrics: udp_send_to is the
# test's seam), the simulator's (one element of a network driven by hand, tests/net_probe.h, on
# the simulator's internal interface) and a reference driver on the element API; same wire, same
# counts.
add_executable(test_elem_drivers tests/test_elem_drivers.c tests/net_probe.c
                                 ${OSN_NODE_DRIVER_SOURCES})
target_include_directories(test_elem_drivers PRIVATE ${CMAKE_SOURCE_DIR}/src/node
                                                     ${CMAKE_SOURCE_DIR}/src/sim)
target_link_libraries(test_elem_drivers PRIVATE osn_sim osn_elem PkgConfig::CMOCKA)
add_test(NAME test_elem_drivers COMMAND test_elem_drivers)
set_tests_properties(test_elem_drivers PROPERTIES TIMEOUT 60)

# Where a SIP message ends on a TCP stream (src/node/tcp_frame.c), against RFC 3261 18.3.
add_executable(test_node_tcp_frame tests/test_node_tcp_frame.c src/node/tcp_frame.c)
target_include_directories(test_node_tcp_frame PRIVATE ${CMAKE_SOURCE_DIR}/src/node)
target_link_libraries(test_node_tcp_frame PRIVATE osn_elem PkgConfig::CMOCKA)
add_test(NAME test_node_tcp_frame COMMAND test_node_tcp_frame)
set_tests_properties(test_node_tcp_frame PROPERTIES TIMEOUT 30)
# The node's IPv4 literal reader (src/node/addr.c) against inet_pton, and the SIP URIs it reads
# into addresses (src/node/route.c).
add_executable(test_node_addr tests/test_node_addr.c src/node/addr.c src/node/route.c)
target_include_directories(test_node_addr PRIVATE ${CMAKE_SOURCE_DIR}/src/node)
target_link_libraries(test_node_addr PRIVATE osn_elem PkgConfig::CMOCKA)
add_test(NAME test_node_addr COMMAND test_node_addr)
set_tests_properties(test_node_addr PROPERTIES TIMEOUT 60)
add_executable(test_node_calls tests/test_node_calls.c)
target_include_directories(test_node_calls PRIVATE ${CMAKE_SOURCE_DIR}/src/node)
target_link_libraries(test_node_calls PRIVATE osn_node PkgConfig::CMOCKA)
add_test(NAME test_node_calls COMMAND test_node_calls)
set_tests_properties(test_node_calls PROPERTIES TIMEOUT 60)
add_executable(test_node_room tests/test_node_room.c)
target_include_directories(test_node_room PRIVATE ${CMAKE_SOURCE_DIR}/src/node)
target_link_libraries(test_node_room PRIVATE osn_node PkgConfig::CMOCKA)
add_test(NAME test_node_room COMMAND test_node_room)
set_tests_properties(test_node_room PROPERTIES TIMEOUT 60)
add_executable(test_node_map tests/test_node_map.c src/node/map.c)
target_include_directories(test_node_map PRIVATE ${CMAKE_SOURCE_DIR}/src/node)
target_link_libraries(test_node_map PRIVATE osn_elem PkgConfig::CMOCKA)
add_test(NAME test_node_map COMMAND test_node_map)
set_tests_properties(test_node_map PROPERTIES TIMEOUT 60)

# The node benchmarks' parts that need no load test: bench/udp_limit.c against the kernel's
# UDP counters (in a network namespace of its own), the pair-by-pair ratios of
# bench/node_pairs.py against hand-worked values, and the scripts' refusals of bad settings.
if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
  add_test(NAME bench_node COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_bench_node.sh
                                   $<TARGET_FILE:udp_limit> ${CMAKE_SOURCE_DIR})
  set_tests_properties(bench_node PROPERTIES TIMEOUT 120)
endif()
# bench/node_maxrate.py's judgements (a step held or not, by either generator; the highest rates
# and their ratios from every pair) on inputs worked out by hand, and the race scripts' refusals
# of bad settings (tests/test_bench_maxrate.sh).
add_test(NAME bench_maxrate COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_bench_maxrate.sh
                                    ${CMAKE_SOURCE_DIR})
set_tests_properties(bench_maxrate PROPERTIES TIMEOUT 60)

# A source's calls (their uids, instants and hold times) are the same whatever the other
# sources offer (docs/scale.md, slice 2), on the simulator's internal interface.
add_executable(test_net_uid tests/test_net_uid.c)
target_include_directories(test_net_uid PRIVATE ${CMAKE_SOURCE_DIR}/src/sim)
target_link_libraries(test_net_uid PRIVATE osn_sim osn_elem PkgConfig::CMOCKA m)
add_test(NAME test_net_uid COMMAND test_net_uid)
set_tests_properties(test_net_uid PROPERTIES TIMEOUT 60)
