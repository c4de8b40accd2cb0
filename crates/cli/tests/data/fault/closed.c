#include <stdlib.h>
#include <string.h>

struct buffer {
    char *b;
    size_t n;
};

static void drop(char *p) { free(p); }

static void close_box(struct buffer *B) { drop(B->b); }

static size_t sum(const char *s, size_t n) {
    size_t t = 0;
    for (size_t i = 0; i < n; i++)
        t += (unsigned char)s[i];
    return t;
}

static size_t finish(struct buffer *B) {
    size_t before = B->n;
    close_box(B);
    return sum(B->b, before);
}

int main(void) {
    struct buffer B;
    B.n = (size_t)1 << 24;
    B.b = malloc(B.n);
    memset(B.b, 1, B.n);
    return (int)finish(&B);
}
