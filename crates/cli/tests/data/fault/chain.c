/* A NULL made two calls away from the crash: `lookup` returns NULL when
   the lookup is strict, `get` keeps it in `found` and passes it to
   `value_of`, which reads `e->val`. The core holds `strict`. `note` is
   NULL too, but the crash's statement does not read it. */
#include <stdio.h>

struct ent {
    const char *key;
    long val;
};

static struct ent fallback = {"default", 0};
static int strict;

static struct ent *lookup(const char *k) {
    if (!strict)
        return &fallback;
    return NULL;
}

static long value_of(struct ent *e) {
    const char *note = NULL;
    if (e == &fallback)
        note = "the fallback";
    if (note)
        puts(note);
    return e->val;
}

static long get(const char *k) {
    struct ent *found = lookup(k);
    return value_of(found);
}

int main(int argc, char **argv) {
    strict = argc < 3;
    printf("%ld\n", get(argc > 1 ? argv[1] : "zz"));
    return 0;
}
