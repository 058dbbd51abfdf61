# traces/ benchmark (tests/bench/bench_trace.sh): tracing overhead of
# `collstep sim --trace` on the Summit 1536-GPU ring and the trace sizes.
# Nothing to compile; `ninja bench_trace` runs the script (not part of all).
if(TARGET collstep AND TARGET cs_traces)
  add_custom_target(bench_trace
                    COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/bench_trace.sh ${CMAKE_BINARY_DIR}
                    DEPENDS collstep USES_TERMINAL)
endif()
