/*
 * bench_exec_mpi.c - the peer of `collstep run` in bench_exec.sh:
 * MPI_Allreduce (float, sum) of Debian's Open MPI, nccl-tests timing
 * (warmup, then the average of `iters` runs, slowest rank), one line per
 * size: "size_bytes time_us".
 *   mpirun -np 2 bench_exec_mpi SIZE[,SIZE...] [ITERS] [WARMUP]
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
    const char *list = argc > 1 ? argv[1] : "8,1048576";
    int iters = argc > 2 ? atoi(argv[2]) : 20, warm = argc > 3 ? atoi(argv[3]) : 5;
    long long hi = 0;
    for (const char *p = list; *p;) {
        long long b = atoll(p);
        hi = b > hi ? b : hi;
        p = strchr(p, ',') ? strchr(p, ',') + 1 : p + strlen(p);
    }
    size_t n = (size_t)hi / sizeof(float) + 1;
    float *in = malloc(n * sizeof(float)), *out = malloc(n * sizeof(float));
    if (!in || !out || iters < 1)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (size_t i = 0; i < n; i++)
        in[i] = (float)(i % 7), out[i] = 0;
    for (const char *p = list; *p;) {
        long long b = atoll(p);
        p = strchr(p, ',') ? strchr(p, ',') + 1 : p + strlen(p);
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
            printf("%lld %.3f\n", b, tmax * 1e6);
    }
    free(in);
    free(out);
    MPI_Finalize();
    return 0;
}
