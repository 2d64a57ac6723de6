# Unit tests (cmocka) and command-line tests, all run by CTest.
function(osn_unit_test name)
  add_executable(${name} tests/${name}.c)
  target_include_directories(${name} PRIVATE ${CMAKE_SOURCE_DIR}/src/model ${CMAKE_SOURCE_DIR}/tests)
  target_link_libraries(${name} PRIVATE osn_io PkgConfig::CMOCKA)
  target_compile_definitions(${name} PRIVATE
    OSN_SHARED_DIR="${CMAKE_SOURCE_DIR}/../shared"
    OSN_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES TIMEOUT 300)
endfunction()

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
target_link_libraries(test_sim PRIVATE osn_sim)
osn_unit_test(test_optimize)

add_test(NAME cli COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_cli.sh $<TARGET_FILE:osn> ${CMAKE_SOURCE_DIR})
set_tests_properties(cli PROPERTIES TIMEOUT 300)
add_test(NAME cli_sim COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_cli_sim.sh $<TARGET_FILE:osn> ${CMAKE_SOURCE_DIR})
set_tests_properties(cli_sim PROPERTIES TIMEOUT 300)
