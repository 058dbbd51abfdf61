/*
 * cs_nccl.c - the NCCL communicator of the GPU executor: device probe,
 * conversion of CUDA and NCCL codes, the communicator bootstrapped through
 * cs_boot, and NCCL's own collectives used as the baseline (contracts in
 * cs_gpu.h).
 *
 * Not a transport of the ops table (cs_transport.h), and not named tp_ for
 * that reason: the table moves one message per request, posted and polled
 * from the host with requests the caller owns, where NCCL enqueues grouped
 * send / receive kernels on a CUDA stream and completes them with the
 * stream; wrapping one in the other would cost a stream synchronisation
 * per message.  The GPU engine (cs_engine_gpu.c) drives NCCL directly.
 *
 * Bootstrap, all ranks in the same order:
 *   1. allgather {status of the device probe, host name}: every rank learns
 *      whether all have a device, and its local rank (index among the ranks
 *      with its host name);
 *   2. cudaSetDevice(local rank % device count);
 *   3. allgather {status, unique id}: rank 0's id (ncclGetUniqueId) is used;
 *   4. ncclCommInitRank.
 * A failing rank still takes part in every exchange, so no rank hangs.
 */
#include <cuda_runtime_api.h>
#include <nccl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cs_gpu.h"
#include "cs_log.h"

#define HOST_MAX 64

struct cs_nccl {
    ncclComm_t comm;
    int rank, size, device, failed;
};

int cs__gpu_cuda_status(int e)
{
    switch (e) {
    case cudaSuccess: return CS_OK;
    case cudaErrorInsufficientDriver:
    case cudaErrorNoDevice:
    case cudaErrorInvalidDevice: return CS_ERR_NODEVICE;
    case cudaErrorMemoryAllocation: return CS_ERR_NOMEM;
    case cudaErrorInvalidValue: return CS_ERR_INVAL;
    case cudaErrorNotReady: return CS_INPROGRESS;
    default: return CS_ERR_TRANSPORT;
    }
}

int cs__gpu_nccl_status(int r)
{
    switch (r) {
    case ncclSuccess: return CS_OK;
    case ncclInProgress: return CS_INPROGRESS;
    case ncclInvalidArgument:
    case ncclInvalidUsage: return CS_ERR_INVAL;
    case ncclRemoteError: return CS_ERR_PEER;
    case ncclUnhandledCudaError: return CS_ERR_NODEVICE;
    default: return CS_ERR_TRANSPORT;
    }
}

int cs__gpu_cuda_err(cs_err_t *err, int e, const char *what)
{
    return cs_err_set(err, cs__gpu_cuda_status(e), "%s: %s (%d)", what,
                      cudaGetErrorString((cudaError_t)e), e);
}

static int nccl_err(cs_err_t *err, ncclResult_t r, ncclComm_t comm, const char *what)
{
    const char *last = ncclGetLastError(comm);
    return cs_err_set(err, cs__gpu_nccl_status(r), "%s: %s (%d)%s%s", what, ncclGetErrorString(r),
                      (int)r, last && *last ? ": " : "", last ? last : "");
}

int cs_gpu_device_count(int *n, cs_err_t *err)
{
    int k = 0;
    cudaError_t e = cudaGetDeviceCount(&k);
    if (e != cudaSuccess)
        return cs_err_set(err, CS_ERR_NODEVICE, "no CUDA device/driver: cudaGetDeviceCount: %s (%d)",
                          cudaGetErrorString(e), (int)e);
    if (k < 1)
        return cs_err_set(err, CS_ERR_NODEVICE, "no CUDA device/driver: cudaGetDeviceCount: 0 devices");
    *n = k;
    return CS_OK;
}

int cs_gpu_reduce(void *dst, const void *src, size_t n, cs_dtype_t dt, cs_op_t op, void *stream,
                  cs_err_t *err)
{
    if ((unsigned)dt >= CS_DT_COUNT || (unsigned)op >= CS_OP_COUNT)
        return cs_err_set(err, CS_ERR_INVAL, "no GPU reduction for type %d / op %d", dt, op);
    int e = cs__gpu_reduce(dst, src, n, dt, op, stream);
    return e ? cs__gpu_cuda_err(err, e, "reduction kernel launch") : CS_OK;
}

double cs_gpu_peak_bandwidth(void)
{
    int dev = 0, khz = 0, bits = 0;
    if (cudaGetDevice(&dev) != cudaSuccess)
        return 0;
    if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&bits, cudaDevAttrGlobalMemoryBusWidth, dev) != cudaSuccess)
        return 0;
    return 2.0 * (double)khz * 1e3 * (double)bits / 8.0;
}

int cs_nccl_open(cs_boot_t *boot, cs_nccl_t **out, cs_err_t *err)
{
    int rank = cs_boot_rank(boot), size = cs_boot_size(boot), ndev = 0;
    struct {
        int32_t st;
        char host[HOST_MAX];
    } mine1, *all1 = NULL;
    struct {
        int32_t st;
        ncclUniqueId id;
    } mine2, *all2 = NULL;
    cs_nccl_t *c = NULL;
    cs_err_t local;
    cs_err_clear(&local);
    memset(&mine1, 0, sizeof(mine1));
    memset(&mine2, 0, sizeof(mine2));
    int st = CS_OK;
    all1 = calloc((size_t)size, sizeof(*all1));
    all2 = calloc((size_t)size, sizeof(*all2));
    c = calloc(1, sizeof(*c));
    if (!all1 || !all2 || !c)
        mine1.st = cs_err_set(&local, CS_ERR_NOMEM, "out of memory");
    else
        mine1.st = cs_gpu_device_count(&ndev, &local);
    gethostname(mine1.host, HOST_MAX - 1);
    if ((st = cs_boot_allgather(boot, &mine1, sizeof(mine1), all1, err)) != CS_OK)
        goto fail;
    if (mine1.st != CS_OK) {
        st = cs_err_set(err, mine1.st, "%s", local.msg);
        goto fail;
    }
    int local_rank = 0, local_size = 0;
    for (int r = 0; r < size; r++) {
        if (all1[r].st != CS_OK) {
            st = cs_err_set(err, all1[r].st, "rank %d has no usable CUDA device (%s)", r,
                            cs_status_str(all1[r].st));
            goto fail;
        }
        if (strncmp(all1[r].host, mine1.host, HOST_MAX) == 0) {
            local_rank += r < rank;
            local_size++;
        }
    }
    c->rank = rank, c->size = size, c->device = local_rank % ndev;
    if (local_size > ndev)
        mine2.st = cs_err_set(&local, CS_ERR_UNSUPPORTED,
                              "%d ranks on host %s but %d CUDA devices: NCCL needs one GPU per rank",
                              local_size, mine1.host, ndev);
    if (mine2.st == CS_OK) {
        cudaError_t e = cudaSetDevice(c->device);
        if (e != cudaSuccess)
            mine2.st = cs__gpu_cuda_err(&local, e, "cudaSetDevice");
    }
    if (mine2.st == CS_OK && rank == 0) {
        ncclResult_t r = ncclGetUniqueId(&mine2.id);
        if (r != ncclSuccess)
            mine2.st = nccl_err(&local, r, NULL, "ncclGetUniqueId");
    }
    if ((st = cs_boot_allgather(boot, &mine2, sizeof(mine2), all2, err)) != CS_OK)
        goto fail;
    if (mine2.st != CS_OK) {
        st = cs_err_set(err, mine2.st, "%s", local.msg);
        goto fail;
    }
    for (int r = 0; r < size; r++)
        if (all2[r].st != CS_OK) {
            st = cs_err_set(err, all2[r].st, "setting up NCCL failed on rank %d (%s)", r,
                            cs_status_str(all2[r].st));
            goto fail;
        }
    ncclResult_t r = ncclCommInitRank(&c->comm, size, all2[0].id, rank);
    if (r != ncclSuccess) {
        c->comm = NULL;
        st = nccl_err(err, r, NULL, "ncclCommInitRank");
        goto fail;
    }
    CS_INFO("exec", "rank %d: NCCL communicator of %d ranks on device %d", rank, size, c->device);
    free(all1);
    free(all2);
    *out = c;
    return CS_OK;
fail:
    free(all1);
    free(all2);
    free(c);
    return st;
}

void cs_nccl_close(cs_nccl_t *c)
{
    if (!c)
        return;
    if (c->comm) {
        if (c->failed)
            ncclCommAbort(c->comm);
        else
            ncclCommDestroy(c->comm);
    }
    free(c);
}

int cs_nccl_rank(const cs_nccl_t *c) { return c->rank; }
int cs_nccl_size(const cs_nccl_t *c) { return c->size; }
int cs_nccl_device(const cs_nccl_t *c) { return c->device; }
void *cs__nccl_comm(cs_nccl_t *c) { return c->comm; }
void cs__nccl_set_failed(cs_nccl_t *c) { c->failed = 1; }

int cs__nccl_async_error(void *comm, cs_err_t *err)
{
    ncclResult_t a = ncclSuccess;
    ncclResult_t r = ncclCommGetAsyncError((ncclComm_t)comm, &a);
    if (r != ncclSuccess)
        return nccl_err(err, r, comm, "ncclCommGetAsyncError");
    if (a != ncclSuccess && a != ncclInProgress)
        return nccl_err(err, a, comm, "NCCL asynchronous error");
    return CS_OK;
}

static ncclDataType_t nccl_type(cs_dtype_t dt)
{
    switch (dt) {
    case CS_DT_F64: return ncclFloat64;
    case CS_DT_F16: return ncclFloat16;
    case CS_DT_BF16: return ncclBfloat16;
    case CS_DT_I32: return ncclInt32;
    case CS_DT_I64: return ncclInt64;
    default: return ncclFloat32;
    }
}

static ncclRedOp_t nccl_op(cs_op_t op)
{
    switch (op) {
    case CS_OP_PROD: return ncclProd;
    case CS_OP_MIN: return ncclMin;
    case CS_OP_MAX: return ncclMax;
    default: return ncclSum;
    }
}

int cs_nccl_baseline(cs_nccl_t *c, const cs_coll_desc_t *desc, cs_dtype_t dt, cs_op_t op,
                     uint64_t count, const void *in, void *out, void *stream, cs_err_t *err)
{
    ncclDataType_t t = nccl_type(dt);
    ncclRedOp_t o = nccl_op(op);
    cudaStream_t s = (cudaStream_t)stream;
    size_t es = cs_dtype_size(dt), P = (size_t)c->size;
    ncclResult_t r = ncclSuccess;
    switch (desc->coll) {
    case CS_COLL_ALLREDUCE: r = ncclAllReduce(in, out, count, t, o, c->comm, s); break;
    case CS_COLL_REDUCE_SCATTER: r = ncclReduceScatter(in, out, count, t, o, c->comm, s); break;
    case CS_COLL_ALLGATHER: r = ncclAllGather(in, out, count, t, c->comm, s); break;
    case CS_COLL_BROADCAST: r = ncclBroadcast(in, out, count, t, desc->root, c->comm, s); break;
    case CS_COLL_REDUCE: r = ncclReduce(in, out, count, t, o, desc->root, c->comm, s); break;
    case CS_COLL_ALLTOALL:
        r = ncclGroupStart();
        for (size_t q = 0; q < P && r == ncclSuccess; q++) {
            r = ncclSend((const char *)in + q * count * es, count, t, (int)q, c->comm, s);
            if (r == ncclSuccess)
                r = ncclRecv((char *)out + q * count * es, count, t, (int)q, c->comm, s);
        }
        {
            ncclResult_t r2 = ncclGroupEnd();
            r = r == ncclSuccess ? r2 : r;
        }
        break;
    default: return cs_err_set(err, CS_ERR_UNSUPPORTED, "no NCCL baseline for this collective");
    }
    if (r != ncclSuccess)
        return nccl_err(err, r, c->comm, "NCCL baseline collective");
    return CS_OK;
}
