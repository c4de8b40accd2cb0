/* A NULL in a struct's field: `reset` clears `s->buf`, and `open_stream`
   allocates it only for a positive size; `put` writes through it. A
   signal handler makes the program one with asynchronous code. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig) {
    interrupted = sig;
}

struct stream {
    int size;
    char *buf;
    int pos;
};

static void reset(struct stream *s) {
    s->buf = NULL;
    s->pos = 0;
}

static void open_stream(struct stream *s, int size) {
    reset(s);
    s->size = size;
    if (size > 0)
        s->buf = malloc(size);
}

static void put(struct stream *s, char c) {
    s->buf[s->pos++] = c;
}

int main(int argc, char **argv) {
    struct stream s;
    signal(SIGINT, on_interrupt);
    open_stream(&s, argc - 1);
    put(&s, 'x');
    printf("%d\n", s.pos);
    return 0;
}
