/* Where the NULL came from: `e` in `get` is NULL when the lookup mode
   makes it so. With mode 2 it is `find`'s result (the key is missing);
   with mode 3 no branch stores to it, and it keeps its initializer. The
   core holds `mode`, whose branches tell which store ran. */
#include <stdio.h>
#include <string.h>

struct ent {
    const char *key;
    long val;
    struct ent *next;
};

static struct ent *head;
static struct ent fallback = {"default", 0, NULL};
int mode;

static struct ent *find(const char *k) {
    for (struct ent *e = head; e; e = e->next)
        if (strcmp(e->key, k) == 0)
            return e;
    return NULL;
}

static long get(const char *k) {
    struct ent *e = NULL;
    if (mode == 1)
        e = &fallback;
    else if (mode == 2)
        e = find(k);
    return e->val;
}

int main(int argc, char **argv) {
    static struct ent one = {"a", 1, NULL};
    head = &one;
    mode = argc > 1 ? 2 : 3;
    printf("%ld\n", get("zz"));
    return 0;
}
