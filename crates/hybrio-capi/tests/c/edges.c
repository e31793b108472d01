/* The edges of the C API's contract on one engine, as a C program meets
 * them: each check says what it found, and the program ends with status 1
 * if any failed.
 *
 *   edges ENGINE DIR       (DIR: a scratch directory of the test's)
 *
 * Written against hybrio.h alone. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hybrio.h"

static const char *engine_name;
static const char *dir;
static int failures;

#define CHECK(cond, ...)                                                                        \
    do {                                                                                        \
        if (!(cond)) {                                                                          \
            fprintf(stderr, "%s: %s:%d: ", engine_name, __func__, __LINE__);                    \
            fprintf(stderr, __VA_ARGS__);                                                       \
            fprintf(stderr, " (last error: %s)\n", hybrio_last_error());                        \
            failures++;                                                                         \
        }                                                                                       \
    } while (0)

static char *path_of(const char *name) {
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return path;
}

/* A file of `len` bytes, byte i being (i * 7) & 0xff. */
static void make_file(const char *name, size_t len) {
    FILE *f = fopen(path_of(name), "w");
    for (size_t i = 0; i < len; i++)
        fputc((int)((i * 7) & 0xff), f);
    fclose(f);
}

/* Reaps until `want` completions are in `out` (at most `max` a call). */
static int reap_all(hybrio_engine *engine, hybrio_completion *out, int want, uint32_t max) {
    int got = 0;
    for (int calls = 0; got < want && calls < 100000; calls++) {
        int n = hybrio_reap(engine, 1, out + got, max);
        if (n < 0)
            return n;
        got += n;
    }
    return got;
}

/* Two writes of one source buffer in flight, one cut short by RLIMIT_FSIZE
 * (its rest then fails with EFBIG): each comes back with its own offset and
 * count, reaped one at a time. */
static void shared_write_buffer(void) {
    if (strcmp(engine_name, "null") == 0)
        return; /* it writes nothing */
    hybrio_engine *engine;
    int err = hybrio_open(engine_name, 4, &engine);
    CHECK(err == 0, "open: %d", err);
    if (err)
        return;
    int file = hybrio_open_file(engine, path_of("limited"),
                                HYBRIO_READ | HYBRIO_WRITE | HYBRIO_CREATE | HYBRIO_TRUNCATE, 0644);
    CHECK(file >= 0, "open file: %d", file);
    char *buf = hybrio_buffer_alloc(4096);
    memset(buf, 'w', 4096);
    struct rlimit old, limited;
    getrlimit(RLIMIT_FSIZE, &old);
    limited = old;
    limited.rlim_cur = 6144;
    signal(SIGXFSZ, SIG_IGN);
    CHECK(setrlimit(RLIMIT_FSIZE, &limited) == 0, "setrlimit: %s", strerror(errno));
    CHECK(hybrio_queue_write(engine, file, 4096, buf, 4096, 1) == 0, "queue the cut write");
    CHECK(hybrio_queue_write(engine, file, 0, buf, 4096, 2) == 0, "queue the whole write");
    CHECK(hybrio_commit(engine) >= 0, "commit");
    hybrio_completion done[2];
    int got = reap_all(engine, done, 2, 1);
    setrlimit(RLIMIT_FSIZE, &old);
    CHECK(got == 2, "reaped %d of 2", got);
    for (int i = 0; i < got; i++) {
        const hybrio_completion *c = &done[i];
        CHECK(c->buf == buf, "user_data %llu: another buffer", (unsigned long long)c->user_data);
        if (c->user_data == 1)
            CHECK(c->result == 2048 && c->offset == 4096,
                  "the cut write: %lld bytes at %llu, not 2048 at 4096", (long long)c->result,
                  (unsigned long long)c->offset);
        else
            CHECK(c->user_data == 2 && c->result == 4096 && c->offset == 0,
                  "user_data %llu: %lld bytes at %llu, not 4096 at 0",
                  (unsigned long long)c->user_data, (long long)c->result,
                  (unsigned long long)c->offset);
    }
    CHECK(hybrio_in_flight(engine) == 0, "%u still in flight", hybrio_in_flight(engine));
    hybrio_close(engine);
    struct stat st;
    stat(path_of("limited"), &st);
    CHECK(st.st_size == 6144, "the file is %lld bytes, not 6144", (long long)st.st_size);
    hybrio_buffer_free(buf, 4096);
}

/* Queueing without reaping stops at the depth, whatever completes inside
 * the queue call, and every request taken comes out of a reap. */
static void depth_holds(void) {
    enum { DEPTH = 4, TRIES = 64 };
    hybrio_engine *engine;
    if (hybrio_open(engine_name, DEPTH, &engine) != 0) {
        CHECK(0, "open");
        return;
    }
    int file = hybrio_open_file(engine, path_of("data"), HYBRIO_READ, 0);
    CHECK(file >= 0, "open file: %d", file);
    char *bufs = hybrio_buffer_alloc(TRIES * 4096);
    int taken = 0, busy = 0;
    for (int i = 0; i < TRIES; i++) {
        int err = hybrio_queue_read(engine, file, (uint64_t)(i % 16) * 4096, bufs + i * 4096, 4096, i);
        if (err == -EBUSY) {
            busy++;
            continue;
        }
        CHECK(err == 0, "queue %d: %d", i, err);
        taken += err == 0;
    }
    CHECK(taken == DEPTH && busy == TRIES - DEPTH, "took %d of %d at depth %d (%d busy)", taken,
          TRIES, DEPTH, busy);
    CHECK(hybrio_in_flight(engine) == (uint32_t)taken, "in flight %u, taken %d",
          hybrio_in_flight(engine), taken);
    CHECK(hybrio_commit(engine) >= 0, "commit");
    hybrio_completion done[TRIES];
    int got = reap_all(engine, done, taken, TRIES);
    CHECK(got == taken, "reaped %d of %d", got, taken);
    for (int i = 0; i < got; i++) {
        uint64_t at = done[i].offset;
        const unsigned char *bytes = done[i].buf;
        CHECK(done[i].result == 4096, "read %llu: %lld", (unsigned long long)done[i].user_data,
              (long long)done[i].result);
        if (strcmp(engine_name, "null") != 0)
            CHECK(bytes[100] == (unsigned char)(((at + 100) * 7) & 0xff), "read at %llu: bytes",
                  (unsigned long long)at);
    }
    CHECK(hybrio_in_flight(engine) == 0, "%u in flight after", hybrio_in_flight(engine));
    hybrio_close(engine);
    hybrio_buffer_free(bufs, TRIES * 4096);
}

/* The largest depth C can ask for opens (and works) or is refused: never an
 * abort. */
static void largest_depth(void) {
    hybrio_engine *engine;
    int err = hybrio_open(engine_name, UINT32_MAX, &engine);
    CHECK(err == 0 || (err < 0 && strlen(hybrio_last_error()) > 0), "open: %d", err);
    if (err) {
        printf("%s: depth UINT32_MAX refused: %s\n", engine_name, hybrio_last_error());
        return;
    }
    int file = hybrio_open_file(engine, path_of("data"), HYBRIO_READ, 0);
    char *buf = hybrio_buffer_alloc(4096);
    CHECK(hybrio_queue_read(engine, file, 0, buf, 4096, 9) == 0, "queue");
    hybrio_completion done;
    CHECK(hybrio_submit_and_reap(engine, 1, &done, 1) == 1 && done.result == 4096, "read");
    hybrio_close(engine);
    hybrio_buffer_free(buf, 4096);
}

struct moved {
    hybrio_engine *engine;
    int file;
    char *buf;
    int result;
};

/* On a thread of its own: a read through an engine another thread used. */
static void *read_elsewhere(void *arg) {
    struct moved *m = arg;
    m->result = hybrio_queue_read(m->engine, m->file, 8192, m->buf, 4096, 2);
    if (m->result == 0)
        m->result = hybrio_commit(m->engine) < 0 ? -1 : 0;
    hybrio_completion done;
    if (m->result == 0) {
        int n = reap_all(m->engine, &done, 1, 1);
        m->result = n == 1 ? (int)done.result : n;
    }
    return NULL;
}

static void *close_elsewhere(void *arg) {
    hybrio_close(arg);
    return NULL;
}

/* An engine moves between threads after its first commit, and closes on a
 * thread that did not commit its request in flight: the close cancels the
 * request before it returns, so the kernel reads nothing afterwards. */
static void engines_move_between_threads(void) {
    hybrio_engine *engine;
    if (hybrio_open(engine_name, 4, &engine) != 0) {
        CHECK(0, "open");
        return;
    }
    int file = hybrio_open_file(engine, path_of("data"), HYBRIO_READ, 0);
    char *buf = hybrio_buffer_alloc(8192);
    CHECK(hybrio_queue_read(engine, file, 0, buf, 4096, 1) == 0, "queue here");
    hybrio_completion done;
    CHECK(hybrio_submit_and_reap(engine, 1, &done, 1) == 1 && done.result == 4096, "read here");
    struct moved m = {engine, file, buf + 4096, -1};
    pthread_t thread;
    pthread_create(&thread, NULL, read_elsewhere, &m);
    pthread_join(thread, NULL);
    CHECK(m.result == 4096, "read on another thread: %d", m.result);
    if (strcmp(engine_name, "null") != 0)
        CHECK((unsigned char)buf[4096 + 5] == (unsigned char)(((8192 + 5) * 7) & 0xff), "its bytes");

    /* A read of an empty FIFO, committed here, never completes by itself. */
    if (strcmp(engine_name, "io_uring") != 0 && strcmp(engine_name, "adaptive") != 0) {
        hybrio_close(engine);
        hybrio_buffer_free(buf, 8192);
        return;
    }
    mkfifo(path_of("fifo"), 0600);
    int fifo = hybrio_open_file(engine, path_of("fifo"), HYBRIO_READ | HYBRIO_WRITE, 0);
    CHECK(fifo >= 0, "open the fifo: %d", fifo);
    int ours = open(path_of("fifo"), O_RDWR | O_NONBLOCK);
    CHECK(hybrio_queue_read(engine, fifo, 0, buf, 16, 3) == 0, "queue the fifo read");
    CHECK(hybrio_commit(engine) >= 0, "commit the fifo read");
    pthread_create(&thread, NULL, close_elsewhere, engine);
    pthread_join(thread, NULL);
    /* Closed: a byte written now stays in the FIFO for us to read back. */
    CHECK(write(ours, "x", 1) == 1, "write to the fifo");
    usleep(20000);
    char back = 0;
    CHECK(read(ours, &back, 1) == 1 && back == 'x',
          "the byte did not stay in the fifo: a read still waited after the close");
    close(ours);
    hybrio_buffer_free(buf, 8192);
}

/* A directory is not a file to read: refused when it opens. */
static void directories_are_refused(void) {
    hybrio_engine *engine;
    if (hybrio_open(engine_name, 2, &engine) != 0) {
        CHECK(0, "open");
        return;
    }
    int file = hybrio_open_file(engine, dir, HYBRIO_READ, 0);
    CHECK(file == -EISDIR, "a directory opened: %d", file);
    hybrio_close(engine);
}

/* Atomic writes on a file whose filesystem offers none (the scratch
 * directory's, or an engine without flags): refused, and the file not
 * left in the engine (the next file opened takes the first handle). */
static void atomic_writes_are_refused_where_they_cannot_be(void) {
    hybrio_engine *engine;
    if (hybrio_open(engine_name, 2, &engine) != 0) {
        CHECK(0, "open");
        return;
    }
    uint32_t flags = HYBRIO_READ | HYBRIO_WRITE | HYBRIO_DIRECT | HYBRIO_ATOMIC_WRITES;
    int file = hybrio_open_file(engine, path_of("data"), flags, 0);
    CHECK(file == -EOPNOTSUPP, "atomic writes were taken here: %d", file);
    CHECK(strstr(hybrio_last_error(), "RWF_ATOMIC") != NULL, "the refusal does not name RWF_ATOMIC");
    file = hybrio_open_file(engine, path_of("data"), HYBRIO_READ, 0);
    CHECK(file == 0, "the refused file kept its handle: the next one is %d", file);
    hybrio_close(engine);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: edges ENGINE DIR\n");
        return 2;
    }
    engine_name = argv[1];
    dir = argv[2];
    make_file("data", 16 * 4096);
    shared_write_buffer();
    depth_holds();
    largest_depth();
    engines_move_between_threads();
    directories_are_refused();
    atomic_writes_are_refused_where_they_cannot_be();
    if (failures) {
        fprintf(stderr, "%s: %d checks failed\n", engine_name, failures);
        return 1;
    }
    printf("%s: every edge held\n", engine_name);
    return 0;
}
