/* Random 4 KiB reads of a file at a depth through a hybrio engine, each block
 * checked against the same bytes read with pread(2).
 *
 *   random_read [ENGINE] FILE READS
 *
 * Written against hybrio.h alone. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hybrio.h"

#define DEPTH 16
#define BLOCK 4096

static int fail(const char *what, int err) {
    fprintf(stderr, "random_read: %s: %s (%s)\n", what, hybrio_last_error(), strerror(-err));
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: random_read [ENGINE] FILE READS\n");
        return 2;
    }
    const char *engine_name = argc == 4 ? argv[1] : NULL;
    const char *path = argv[argc - 2];
    long reads = atol(argv[argc - 1]);
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size < BLOCK) {
        fprintf(stderr, "random_read: %s: not a file of at least one block\n", path);
        return 1;
    }
    uint64_t blocks = (uint64_t)st.st_size / BLOCK;

    hybrio_engine *engine;
    int err = hybrio_open(engine_name, DEPTH, &engine);
    if (err < 0)
        return fail("open engine", err);
    int file = hybrio_open_file(engine, path, HYBRIO_READ, 0);
    if (file < 0)
        return fail(path, file);
    /* The caller's own buffers: one allocation, cut in DEPTH blocks. */
    char *memory = hybrio_buffer_alloc((size_t)DEPTH * BLOCK);
    char *free_bufs[DEPTH];
    int nfree = 0;
    for (int i = 0; i < DEPTH; i++)
        free_bufs[nfree++] = memory + (size_t)i * BLOCK;
    char expected[BLOCK];
    uint64_t state = 88172645463325252ULL;
    long queued = 0, checked = 0;
    hybrio_completion done[DEPTH];
    int status = 0;
    while (checked < reads && status == 0) {
        while (nfree > 0 && queued < reads) {
            state ^= state << 13, state ^= state >> 7, state ^= state << 17;
            uint64_t block = state % blocks;
            err = hybrio_queue_read(engine, file, block * BLOCK, free_bufs[nfree - 1], BLOCK, block);
            if (err == -EBUSY)
                break;
            if (err < 0) {
                status = fail("queue read", err);
                break;
            }
            nfree--;
            queued++;
        }
        /* Hand the reads over and wait for one: one system call on io_uring. */
        int n = hybrio_submit_and_reap(engine, 1, done, DEPTH);
        if (n < 0) {
            status = fail("submit and reap", n);
            break;
        }
        for (int i = 0; i < n; i++) {
            uint64_t block = done[i].user_data;
            if (done[i].result != BLOCK || pread(fd, expected, BLOCK, (off_t)(block * BLOCK)) != BLOCK ||
                memcmp(expected, done[i].buf, BLOCK) != 0) {
                fprintf(stderr, "random_read: block %llu read back wrong (%lld)\n",
                        (unsigned long long)block, (long long)done[i].result);
                status = 1;
            }
            free_bufs[nfree++] = done[i].buf;
            checked++;
        }
    }
    hybrio_counters counters;
    hybrio_get_counters(engine, &counters);
    if (status == 0)
        printf("%ld random reads checked; inline %llu, asynchronous %llu\n", checked,
               (unsigned long long)counters.inline_requests, (unsigned long long)counters.async_requests);
    hybrio_close(engine);
    hybrio_buffer_free(memory, (size_t)DEPTH * BLOCK);
    close(fd);
    return status;
}
