/* Crashes inside callbacks that the C library calls: qsort's and
 * bsearch's comparison functions. The stack goes from the crash through
 * the library's frames (no frame pointers there) back into the program. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct item { int key; const char *name; };

static int by_key(const void *a, const void *b)
{
    const struct item *x = a, *y = b;
    if (x->name == NULL || y->name == NULL)
        return *(volatile int *)0;
    return x->key - y->key;
}

static void sort_items(struct item *v, int n)
{
    qsort(v, n, sizeof *v, by_key);
    printf("sorted %d\n", n);
}

static struct item *find_item(struct item *v, int n, int key)
{
    struct item want = { key, NULL };
    struct item *found = bsearch(&want, v, n, sizeof *v, by_key);
    printf("found %p\n", (void *)found);
    return found;
}

int main(int argc, char **argv)
{
    struct item v[40];
    for (int i = 0; i < 40; i++) {
        v[i].key = (i * 7) % 40;
        v[i].name = "item";
    }
    if (argc > 1 && strcmp(argv[1], "qsort") == 0)
        v[33].name = NULL;
    sort_items(v, 40);
    if (argc > 1 && strcmp(argv[1], "bsearch") == 0)
        find_item(v, 40, 17);
    printf("done\n");
    return 0;
}
