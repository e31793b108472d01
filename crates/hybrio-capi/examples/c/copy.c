/* Copies a file through a hybrio engine: reads of 64 KiB, each write of the
 * same bytes queued as its read completes, up to DEPTH requests in flight.
 *
 *   copy [ENGINE] SRC DST      (ENGINE: adaptive by default)
 *
 * Written against hybrio.h alone. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hybrio.h"

#define DEPTH 8
#define BLOCK (64 * 1024)

static int fail(const char *what, int err) {
    fprintf(stderr, "copy: %s: %s (%s)\n", what, hybrio_last_error(), strerror(-err));
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: copy [ENGINE] SRC DST\n");
        return 2;
    }
    const char *engine_name = argc == 4 ? argv[1] : NULL;
    const char *src_path = argv[argc - 2], *dst_path = argv[argc - 1];
    struct stat st;
    if (stat(src_path, &st) != 0) {
        perror(src_path);
        return 1;
    }
    hybrio_engine *engine;
    int err = hybrio_open(engine_name, DEPTH, &engine);
    if (err < 0)
        return fail("open engine", err);
    int src = hybrio_open_file(engine, src_path, HYBRIO_READ, 0);
    if (src < 0)
        return fail(src_path, src);
    int dst = hybrio_open_file(engine, dst_path, HYBRIO_WRITE | HYBRIO_CREATE | HYBRIO_TRUNCATE, 0644);
    if (dst < 0)
        return fail(dst_path, dst);

    void *free_bufs[DEPTH];
    int nfree = 0;
    for (int i = 0; i < DEPTH; i++)
        free_bufs[nfree++] = hybrio_buffer_alloc(BLOCK);
    uint64_t next = 0, written = 0, size = (uint64_t)st.st_size;
    hybrio_completion done[DEPTH];
    int status = 0;
    while (written < size && status == 0) {
        /* Reads while there is a free buffer and something left to read. */
        while (nfree > 0 && next < size) {
            size_t len = size - next < BLOCK ? (size_t)(size - next) : BLOCK;
            err = hybrio_queue_read(engine, src, next, free_bufs[nfree - 1], len, len);
            if (err == -EBUSY)
                break;
            if (err < 0) {
                status = fail("queue read", err);
                break;
            }
            nfree--;
            next += len;
        }
        if ((err = hybrio_commit(engine)) < 0) {
            status = fail("commit", err);
            break;
        }
        int n = hybrio_reap(engine, 1, done, DEPTH);
        if (n < 0) {
            status = fail("reap", n);
            break;
        }
        for (int i = 0; i < n; i++) {
            hybrio_completion *c = &done[i];
            if (c->result < 0) {
                fprintf(stderr, "copy: %s at %llu: %s\n", c->op == HYBRIO_OP_READ ? "read" : "write",
                        (unsigned long long)c->offset, strerror((int)-c->result));
                status = 1;
            } else if (c->op == HYBRIO_OP_READ) {
                /* The read's bytes go out as a write of the same buffer. */
                err = hybrio_queue_write(engine, dst, c->offset, c->buf, (size_t)c->result, 0);
                if (err == -EBUSY) {
                    /* Full with writes: they complete first, then this one goes. */
                    hybrio_commit(engine);
                    hybrio_completion w;
                    while ((err = hybrio_queue_write(engine, dst, c->offset, c->buf,
                                                     (size_t)c->result, 0)) == -EBUSY) {
                        if (hybrio_reap(engine, 1, &w, 1) == 1) {
                            written += (uint64_t)w.result;
                            free_bufs[nfree++] = w.buf;
                        }
                    }
                }
                if (err < 0)
                    status = fail("queue write", err);
            } else {
                written += (uint64_t)c->result;
                free_bufs[nfree++] = c->buf;
            }
        }
    }
    /* What is still out comes back before the buffers are freed. */
    hybrio_commit(engine);
    while (hybrio_in_flight(engine) > 0) {
        int n = hybrio_reap(engine, 1, done, DEPTH);
        for (int i = 0; i < n; i++)
            if (done[i].buf)
                free_bufs[nfree++] = done[i].buf;
        if (n <= 0)
            break;
    }
    char *line = hybrio_describe(engine);
    if (status == 0)
        printf("copied %llu bytes with %s\n", (unsigned long long)written, line);
    hybrio_free_string(line);
    hybrio_close(engine);
    for (int i = 0; i < nfree; i++)
        hybrio_buffer_free(free_bufs[i], BLOCK);
    return status;
}
