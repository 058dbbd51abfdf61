/*
 * bench_sim_smpi.c - the SMPI peer of bench_sim.sh: one MPI_Allreduce of
 * BYTES bytes of floats (sum) on every rank, timed with MPI_Wtime, which
 * SMPI answers with the simulated clock.  Built by bench_sim.sh with
 * smpicc (SimGrid's MPI), not by CMake; run with smpirun on the platform
 * exported by `collstep platform export` and --cfg=smpi/allreduce:lr.
 *
 *   bench_sim_smpi BYTES
 * prints "smpi allreduce: P ranks, BYTES bytes, simulated T s" on rank 0.
 */
#include <mpi.h>
#include <stdio.h>
#include <smpi/smpi.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long bytes = argc > 1 ? atol(argv[1]) : 104857600L;
    int count = (int)(bytes / (long)sizeof(float));
    /* Only sizes matter (contents are not checked): with
     * --cfg=smpi/shared-malloc:global every rank maps the same pages, so
     * 256 ranks x 2 x 100 MB fit in memory. */
    float *in = SMPI_SHARED_MALLOC((size_t)count * sizeof(float));
    float *out = SMPI_SHARED_MALLOC((size_t)count * sizeof(float));
    if (!in || !out)
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    MPI_Allreduce(in, out, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    double t = MPI_Wtime() - t0, tmax = 0;
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("smpi allreduce: %d ranks, %ld bytes, simulated %.6f s\n", size, bytes, tmax);
    SMPI_SHARED_FREE(in);
    SMPI_SHARED_FREE(out);
    MPI_Finalize();
    return 0;
}
