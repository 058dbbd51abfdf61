/*
 * bench_exec_mpi.c - the peer of `collstep run` in bench_exec.sh:
 * MPI_Allreduce (float, sum) of Debian's Open MPI, nccl-tests timing
 * (warmup, then the average of `iters` runs, slowest rank), one line per
 * size: "size_bytes time_us".
 *   mpirun -np 2 bench_exec_mpi MINBYTES MAXBYTES [ITERS] [WARMUP] [FACTOR]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    long long lo = argc > 1 ? atoll(argv[1]) : 8, hi = argc > 2 ? atoll(argv[2]) : 1 << 20;
    int iters = argc > 3 ? atoi(argv[3]) : 20, warm = argc > 4 ? atoi(argv[4]) : 5;
    long long factor = argc > 5 ? atoll(argv[5]) : 2;
    size_t n = (size_t)hi / sizeof(float) + 1;
    float *in = malloc(n * sizeof(float)), *out = malloc(n * sizeof(float));
    if (!in || !out)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (size_t i = 0; i < n; i++)
        in[i] = (float)(i % 7), out[i] = 0;
    for (long long b = lo; b <= hi; b *= factor) {
        int count = (int)(b / (long long)sizeof(float));
        for (int i = 0; i < warm; i++)
            MPI_Allreduce(in, out, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++)
            MPI_Allreduce(in, out, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        double t = (MPI_Wtime() - t0) / iters, tmax = 0;
        MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0)
            printf("%lld %.2f\n", b, tmax * 1e6);
        if (b == 0)
            b = 1;
    }
    free(in);
    free(out);
    MPI_Finalize();
    return 0;
}
