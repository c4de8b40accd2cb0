#include <stdlib.h>
#include <string.h>

struct entry {
    const char *key;
    int value;
};

static struct entry table[] = {{"one", 1}, {"two", 2}};

static int find(const char *key, struct entry **out) {
    if (strlen(key) > 3)
        return -1;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        if (strcmp(table[i].key, key) == 0) {
            *out = &table[i];
            return 0;
        }
    }
    *out = NULL;
    return -1;
}

static int lookup(const char *key, struct entry **out) {
    return find(key, out);
}

int main(int argc, char **argv) {
    struct entry *e = NULL;
    const char *key = argc > 1 ? argv[1] : "three";
    lookup(key, &e);
    return e->value;
}
