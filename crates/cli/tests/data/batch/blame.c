/* One bug, two stacks: `lookup` returns NULL when the lookup is strict,
   and two callers dereference its result, `value_of` (called by
   `by_name`) and `doubled`. Grouped by stack they are two crashes;
   grouped by blame, one: the `return NULL;` of `lookup`. */
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
    return e->val;
}

static long by_name(const char *k) {
    struct ent *found = lookup(k);
    return value_of(found);
}

static long doubled(const char *k) {
    struct ent *e = lookup(k);
    return 2 * e->val;
}

int main(int argc, char **argv) {
    strict = 1;
    if (argc > 1)
        printf("%ld\n", doubled(argv[1]));
    printf("%ld\n", by_name("zz"));
    return 0;
}
