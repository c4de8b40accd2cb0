#include <stdio.h>
#include <stdlib.h>
#include <string.h>
struct ent { const char *key; long val; struct ent *next; };
static struct ent *head;
static struct ent *find(const char *k) {
    for (struct ent *e = head; e; e = e->next)
        if (strcmp(e->key, k) == 0) return e;
    return NULL;
}
static long get(const char *k) {
    struct ent *e = find(k);
    return e->val;
}
static int ratio(int a, int b) { return a / b; }
int main(int argc, char **argv) {
    static struct ent one = { "a", 1, NULL };
    head = &one;
    if (argc > 1 && argv[1][0] == 'd') return ratio(10, argc - 2);
    printf("%ld\n", get(argc > 1 ? argv[1] : "a"));
    printf("%ld\n", get("zz"));
    return 0;
}
