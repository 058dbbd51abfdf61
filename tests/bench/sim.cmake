# sim/ benchmark programs (tests/bench/bench_sim.sh): the bare SimGrid ring.
if(TARGET cs_sim AND TARGET cs_platforms)
  add_executable(sim_bare_ring ${CMAKE_CURRENT_LIST_DIR}/sim_bare_ring.c)
  target_link_libraries(sim_bare_ring PRIVATE cs_sim cs_platforms cs_core)
endif()
