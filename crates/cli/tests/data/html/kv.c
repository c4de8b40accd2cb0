/* A key-value lookup that crashes on a missing key: `find` returns NULL
 * and `lookup` reads through it. It logs to stderr (unbuffered), so the
 * log has every line printed before the crash. */
#include <stdio.h>
#include <string.h>

struct entry {
    const char *key;
    struct entry *next;
};

int inserted;

static struct entry *find(struct entry *head, const char *key) {
    struct entry *e = head;
    while (e && strcmp(e->key, key) != 0)
        e = e->next;
    return e;
}

static int lookup(struct entry *head, const char *key) {
    struct entry *e = find(head, key);
    int len = (int)strlen(e->key);
    return len;
}

int main(int argc, char **argv) {
    static struct entry a = {"a", NULL};
    const char *key = argc > 1 ? argv[1] : "a";
    inserted = 1;
    fprintf(stderr, "inserted %s\n", a.key);
    if (argc > 2) {
        fprintf(stderr, "too many arguments\n");
        return 2;
    }
    fprintf(stderr, "looking up %s\n", key);
    int n = lookup(&a, key);
    printf("found %s: %d\n", key, n);
    return 0;
}
