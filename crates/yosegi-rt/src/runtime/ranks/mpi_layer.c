/* The runtime's MPI layer: the few operations ranks need (start-up, a broadcast from the rank
 * that holds the bytes, point-to-point copies between two ranks, abort), compiled with the
 * site's MPI compiler wrapper the first time a program runs as several ranks, and loaded by
 * the runtime (runtime/ranks.rs). Going through the wrapper keeps the runtime free of any one
 * MPI implementation's ABI. Every wait polls with a deadline, so that a rank that died or a
 * collective that never completes ends the job with a message instead of a hang. */
#include <mpi.h>
#include <stdint.h>
#include <time.h>
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif

#define CHUNK ((uint64_t)1 << 30)

static double timeout_s = 600.0;
static MPI_Comm world = MPI_COMM_NULL;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* 0: done; 1: timed out; 2: MPI reported an error; 3: a message of another size than
 * `expected` bytes arrived (when `expected` is not negative). */
static int wait_for_count(MPI_Request *request, long long expected) {
    double started = 0.0;
    long polls = 0;
    for (;;) {
        int done = 0;
        MPI_Status status;
        if (MPI_Test(request, &done, &status) != MPI_SUCCESS) return 2;
        if (done) {
            int count = 0;
            if (expected >= 0 && (MPI_Get_count(&status, MPI_BYTE, &count) != MPI_SUCCESS || count != expected)) return 3;
            return 0;
        }
        if (++polls < 20000) continue;
        if (started == 0.0) started = now();
        if (now() - started > timeout_s) return 1;
        struct timespec pause = {0, 20000};
        nanosleep(&pause, NULL);
    }
}

static int wait_for(MPI_Request *request) { return wait_for_count(request, -1); }

/* Starts MPI (unless the program did) and says who this process is: its rank and the job's
 * size, and its rank and count among the ranks of its node. */
int yosegi_mpi_init(int *rank, int *size, int *local_rank, int *local_size, double timeout) {
    int started = 0;
    MPI_Initialized(&started);
    if (!started) {
        int provided = 0;
        if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) return 2;
    }
    /* Errors come back to the runtime, which names the rank and the operation before it ends
     * the job (MPI's default handler would end it without saying what was going on). */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (MPI_Comm_dup(MPI_COMM_WORLD, &world) != MPI_SUCCESS) return 2;
    MPI_Comm_set_errhandler(world, MPI_ERRORS_RETURN);
    MPI_Comm_rank(world, rank);
    MPI_Comm_size(world, size);
    MPI_Comm node;
    if (MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, *rank, MPI_INFO_NULL, &node) != MPI_SUCCESS) return 2;
    MPI_Comm_rank(node, local_rank);
    MPI_Comm_size(node, local_size);
    MPI_Comm_free(&node);
    if (timeout > 0) timeout_s = timeout;
    return 0;
}

/* `len` bytes at `data` from rank `root` to every rank. */
int yosegi_mpi_bcast(void *data, uint64_t len, int root) {
    for (uint64_t done = 0; done < len; done += CHUNK) {
        uint64_t n = len - done < CHUNK ? len - done : CHUNK;
        MPI_Request request;
        if (MPI_Ibcast((char *)data + done, (int)n, MPI_BYTE, root, world, &request) != MPI_SUCCESS) return 2;
        int status = wait_for(&request);
        if (status) return status;
    }
    return 0;
}

int yosegi_mpi_send(const void *data, uint64_t len, int to) {
    for (uint64_t done = 0; done < len; done += CHUNK) {
        uint64_t n = len - done < CHUNK ? len - done : CHUNK;
        MPI_Request request;
        if (MPI_Isend((const char *)data + done, (int)n, MPI_BYTE, to, 7, world, &request) != MPI_SUCCESS) return 2;
        int status = wait_for(&request);
        if (status) return status;
    }
    return 0;
}

int yosegi_mpi_recv(void *data, uint64_t len, int from) {
    for (uint64_t done = 0; done < len; done += CHUNK) {
        uint64_t n = len - done < CHUNK ? len - done : CHUNK;
        MPI_Request request;
        if (MPI_Irecv((char *)data + done, (int)n, MPI_BYTE, from, 7, world, &request) != MPI_SUCCESS) return 2;
        int status = wait_for_count(&request, (long long)n);
        if (status) return status;
    }
    return 0;
}

/* Every rank's `len` bytes at `mine` to every rank: `all` receives them in rank order,
 * `lens[r]` bytes from rank r at `offsets[r]` (the caller learnt the lengths first). */
int yosegi_mpi_allgather(const void *mine, uint64_t len, void *all, const int *lens, const int *offsets) {
    MPI_Request request;
    if (MPI_Iallgatherv(mine, (int)len, MPI_BYTE, all, lens, offsets, MPI_BYTE, world, &request) != MPI_SUCCESS) return 2;
    return wait_for(&request);
}

/* Every rank waits here for the others (the end of the program). */
int yosegi_mpi_barrier(void) {
    MPI_Request request;
    if (MPI_Ibarrier(world, &request) != MPI_SUCCESS) return 2;
    return wait_for(&request);
}

/* Whether MPI reads and writes GPU memory itself (CUDA-aware): then copies between two ranks'
 * GPUs go device to device, without the runtime staging them in host memory. */
int yosegi_mpi_device_aware(void) {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
    return MPIX_Query_cuda_support();
#else
    return 0;
#endif
}

void yosegi_mpi_abort(int status) { MPI_Abort(MPI_COMM_WORLD, status); }

void yosegi_mpi_finalize(void) {
    int finished = 0;
    MPI_Finalized(&finished);
    if (!finished) MPI_Finalize();
}
