/* Function pointers: commands dispatched through a table, a comparator
 * passed to qsort, and a handler chosen at run time. "fnptr sort sum
 * last" crashes in cmd_last, called through the table: the list is empty
 * after "sum" drained it, and its tail is NULL.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct list {
    int items[16];
    int count;
    int *tail;
};

typedef int (*command_fn)(struct list *);

static int by_value(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static int cmd_sort(struct list *l) {
    qsort(l->items, l->count, sizeof l->items[0], by_value);
    printf("sorted %d items\n", l->count);
    return 0;
}

static int cmd_sum(struct list *l) {
    int s = 0;
    while (l->count > 0)
        s += l->items[--l->count];
    l->tail = l->count ? &l->items[l->count - 1] : NULL;
    printf("sum %d\n", s);
    return s;
}

static int cmd_last(struct list *l) {
    return *l->tail;
}

static int cmd_reverse(struct list *l) {
    for (int i = 0, j = l->count - 1; i < j; i++, j--) {
        int t = l->items[i];
        l->items[i] = l->items[j];
        l->items[j] = t;
    }
    printf("reversed\n");
    return 0;
}

static const struct {
    const char *name;
    command_fn fn;
} commands[] = {
    {"sort", cmd_sort},
    {"sum", cmd_sum},
    {"last", cmd_last},
    {"reverse", cmd_reverse},
};

static command_fn lookup(const char *name) {
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(commands[i].name, name) == 0)
            return commands[i].fn;
    return NULL;
}

static int run(struct list *l, const char *name) {
    command_fn fn = lookup(name);
    if (fn == NULL) {
        printf("unknown command %s\n", name);
        return -1;
    }
    int r = fn(l);
    printf("%s -> %d\n", name, r);
    return r;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        printf("usage: fnptr COMMAND...\n");
        return 2;
    }
    struct list l = {{5, 3, 9, 1, 7}, 5, NULL};
    l.tail = &l.items[4];
    int failures = 0;
    for (int i = 1; i < argc; i++)
        if (run(&l, argv[i]) < 0)
            failures++;
    printf("%d failures\n", failures);
    return failures != 0;
}
