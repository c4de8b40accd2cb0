#include <stdio.h>
#include "inl_kv.h"

static struct entry c = { 0, 3, 0 };
static struct entry b = { "b", 2, &c };
static struct entry a = { "a", 1, &b };

int cmd_incr(const char *key)
{
    struct entry *e = kv_find(&a, key);
    if (!e)
        return -1;
    e->val++;
    return e->val;
}

int main(int argc, char **argv)
{
    int r = cmd_incr(argc > 5 ? "a" : "zz");
    printf("%d\n", r);
    return 0;
}
