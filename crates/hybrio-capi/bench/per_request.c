/* One loop, three ways, to set the C API's per-request cost against what a
 * C programmer would write without it: N random 4 KiB reads of a file at a
 * depth, refilled as completions come back.
 *
 *   per_request hybrio ENGINE FILE N DEPTH   the C API (ENGINE: io_uring, psync, adaptive...)
 *   per_request liburing FILE N DEPTH        liburing 2.x, a plain ring
 *   per_request pread FILE N                 pread(2) in a loop (depth 1)
 *
 * Prints the nanoseconds per read (CLOCK_MONOTONIC over the loop alone), the
 * process's CPU time per read (user and system: what the loop itself cost,
 * whatever else ran on the machine), and a checksum of the bytes read, so
 * that no way can skip work. Build:
 * crates/hybrio-capi/bench/compare.sh. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "hybrio.h"

#define BLOCK 4096
#define MAX_DEPTH 256

static uint64_t state = 88172645463325252ULL;
static uint64_t next_block(uint64_t blocks) {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    return state % blocks;
}

static double now_ns(clockid_t clock) {
    struct timespec t;
    clock_gettime(clock, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static uint64_t sum_of(const unsigned char *buf) {
    return buf[0] + buf[BLOCK - 1];
}

static int with_hybrio(const char *engine_name, const char *path, long n, unsigned depth,
                       uint64_t blocks, uint64_t *sum) {
    hybrio_engine *engine;
    if (hybrio_open(engine_name, depth, &engine) < 0 ||
        hybrio_open_file(engine, path, HYBRIO_READ, 0) < 0) {
        fprintf(stderr, "hybrio: %s\n", hybrio_last_error());
        return 1;
    }
    char *memory = hybrio_buffer_alloc((size_t)depth * BLOCK);
    void *free_bufs[MAX_DEPTH];
    unsigned nfree = 0;
    for (unsigned i = 0; i < depth; i++)
        free_bufs[nfree++] = memory + (size_t)i * BLOCK;
    hybrio_completion done[MAX_DEPTH];
    long queued = 0, completed = 0;
    while (completed < n) {
        while (nfree > 0 && queued < n) {
            int err = hybrio_queue_read(engine, 0, next_block(blocks) * BLOCK, free_bufs[nfree - 1],
                                        BLOCK, 0);
            if (err == -EBUSY)
                break;
            if (err < 0)
                return 1;
            nfree--, queued++;
        }
        int got = hybrio_submit_and_reap(engine, 1, done, depth);
        if (got < 0)
            return 1;
        for (int i = 0; i < got; i++) {
            if (done[i].result != BLOCK)
                return 1;
            *sum += sum_of(done[i].buf);
            free_bufs[nfree++] = done[i].buf;
        }
        completed += got;
    }
    hybrio_close(engine);
    hybrio_buffer_free(memory, (size_t)depth * BLOCK);
    return 0;
}

static int with_liburing(const char *path, long n, unsigned depth, uint64_t blocks, uint64_t *sum) {
    struct io_uring ring;
    int fd = open(path, O_RDONLY);
    if (fd < 0 || io_uring_queue_init(depth, &ring, 0) < 0)
        return 1;
    char *memory = aligned_alloc(BLOCK, (size_t)depth * BLOCK);
    memset(memory, 0, (size_t)depth * BLOCK);
    void *free_bufs[MAX_DEPTH];
    unsigned nfree = 0;
    for (unsigned i = 0; i < depth; i++)
        free_bufs[nfree++] = memory + (size_t)i * BLOCK;
    long queued = 0, completed = 0;
    while (completed < n) {
        while (nfree > 0 && queued < n) {
            struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
            if (!sqe)
                break;
            void *buf = free_bufs[--nfree];
            io_uring_prep_read(sqe, fd, buf, BLOCK, next_block(blocks) * BLOCK);
            io_uring_sqe_set_data(sqe, buf);
            queued++;
        }
        struct io_uring_cqe *cqe;
        if (io_uring_submit_and_wait(&ring, 1) < 0)
            return 1;
        unsigned head, got = 0;
        io_uring_for_each_cqe(&ring, head, cqe) {
            if (cqe->res != BLOCK)
                return 1;
            void *buf = io_uring_cqe_get_data(cqe);
            *sum += sum_of(buf);
            free_bufs[nfree++] = buf;
            got++;
        }
        io_uring_cq_advance(&ring, got);
        completed += got;
    }
    io_uring_queue_exit(&ring);
    free(memory);
    close(fd);
    return 0;
}

static int with_pread(const char *path, long n, uint64_t blocks, uint64_t *sum) {
    int fd = open(path, O_RDONLY);
    char *buf = aligned_alloc(BLOCK, BLOCK);
    if (fd < 0 || !buf)
        return 1;
    for (long i = 0; i < n; i++) {
        if (pread(fd, buf, BLOCK, (off_t)(next_block(blocks) * BLOCK)) != BLOCK)
            return 1;
        *sum += sum_of((unsigned char *)buf);
    }
    free(buf);
    close(fd);
    return 0;
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The C API and the reference in turn, CHUNKS times N/CHUNKS reads each,
 * in one process: both meet the machine as it is at that moment. Prints
 * each chunk's CPU ns/read of both and the ratio, then the median ratio. */
static int pair(const char *engine_name, unsigned depth, const char *reference, const char *path,
                long n, int chunks, uint64_t blocks) {
    if (chunks < 1 || chunks > 1000 || n / chunks < 1)
        return 2;
    double ratios[1000];
    uint64_t sum = 0;
    long each = n / chunks;
    for (int i = 0; i < chunks; i++) {
        double mine = 0, theirs = 0;
        /* Who goes first alternates: neither always meets the other's leftovers. */
        for (int turn = 0; turn < 2; turn++) {
            int hybrio_now = (turn + i) % 2 == 0;
            double start = now_ns(CLOCK_PROCESS_CPUTIME_ID);
            int status = hybrio_now ? with_hybrio(engine_name, path, each, depth, blocks, &sum)
                         : strcmp(reference, "liburing") == 0 ? with_liburing(path, each, depth, blocks, &sum)
                                                              : with_pread(path, each, blocks, &sum);
            if (status != 0)
                return 1;
            *(hybrio_now ? &mine : &theirs) = now_ns(CLOCK_PROCESS_CPUTIME_ID) - start;
        }
        ratios[i] = mine / theirs;
        printf("chunk %d: %.1f %.1f ns of CPU/read, ratio %.3f\n", i, mine / each, theirs / each,
               ratios[i]);
    }
    qsort(ratios, (size_t)chunks, sizeof ratios[0], compare_doubles);
    printf("median ratio %.3f (checksum %llu)\n", ratios[chunks / 2], (unsigned long long)sum);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: per_request hybrio ENGINE FILE N DEPTH | liburing FILE N DEPTH | pread FILE N\n"
                        "       per_request pair ENGINE DEPTH liburing|pread FILE N CHUNKS\n");
        return 2;
    }
    if (strcmp(argv[1], "pair") == 0) {
        struct stat st;
        unsigned depth = argc == 8 ? (unsigned)atoi(argv[3]) : 0;
        if (argc != 8 || stat(argv[5], &st) != 0 || depth == 0 || depth > MAX_DEPTH) {
            fprintf(stderr, "per_request: pair ENGINE DEPTH liburing|pread FILE N CHUNKS\n");
            return 2;
        }
        int status = pair(argv[2], depth, argv[4], argv[5], atol(argv[6]), atoi(argv[7]),
                          (uint64_t)st.st_size / BLOCK);
        if (status != 0)
            fprintf(stderr, "per_request: pair failed\n");
        return status;
    }
    const char *way = argv[1];
    int hybrio_way = strcmp(way, "hybrio") == 0;
    const char *path = argv[hybrio_way ? 3 : 2];
    long n = atol(argv[hybrio_way ? 4 : 3]);
    unsigned depth = strcmp(way, "pread") == 0 ? 1 : (unsigned)atoi(argv[hybrio_way ? 5 : 4]);
    struct stat st;
    if (stat(path, &st) != 0 || depth == 0 || depth > MAX_DEPTH) {
        fprintf(stderr, "per_request: bad file or depth\n");
        return 2;
    }
    uint64_t blocks = (uint64_t)st.st_size / BLOCK, sum = 0;
    double start = now_ns(CLOCK_MONOTONIC), cpu_start = now_ns(CLOCK_PROCESS_CPUTIME_ID);
    int status = hybrio_way                       ? with_hybrio(argv[2], path, n, depth, blocks, &sum)
                 : strcmp(way, "liburing") == 0 ? with_liburing(path, n, depth, blocks, &sum)
                                                : with_pread(path, n, blocks, &sum);
    double spent = now_ns(CLOCK_MONOTONIC) - start;
    double cpu = now_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu_start;
    if (status != 0) {
        fprintf(stderr, "per_request: %s failed\n", way);
        return 1;
    }
    printf("%.1f ns/read, %.1f ns of CPU/read (checksum %llu)\n", spent / n, cpu / n,
           (unsigned long long)sum);
    return 0;
}
