# bench_exec_mpi: MPI_Allreduce of Debian's Open MPI, the peer that
# bench_exec.sh compares `collstep run` with.
find_package(MPI COMPONENTS C QUIET)
if(MPI_C_FOUND)
  add_executable(bench_exec_mpi ${CMAKE_CURRENT_LIST_DIR}/bench_exec_mpi.c)
  target_link_libraries(bench_exec_mpi PRIVATE MPI::MPI_C)
endif()
