# bench_gpu: CUDA reduction kernels as a fraction of the GPU's memory
# bandwidth, and the GPU engine against ncclAllReduce on one GPU
# (bench_gpu.sh runs it).  Built with the GPU executor only.
if(TARGET cs_exec_gpu)
  add_executable(bench_gpu ${CMAKE_CURRENT_LIST_DIR}/bench_gpu.c)
  target_include_directories(bench_gpu PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  target_link_libraries(bench_gpu PRIVATE cs_exec_gpu cs_exec cs_algos cs_core)
endif()
