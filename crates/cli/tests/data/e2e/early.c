/* Early returns: a record validator with many ways out, and an assert
 * that fails on a record that passed validation ("early 7:alice:42
 * 3:bob:-1 9:carol:250": carol's age fails the assert).
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct record {
    int id;
    char name[16];
    int age;
};

static int parse(const char *text, struct record *r) {
    const char *colon = strchr(text, ':');
    if (colon == NULL)
        return -1;
    r->id = atoi(text);
    if (r->id <= 0)
        return -2;
    const char *name = colon + 1;
    const char *colon2 = strchr(name, ':');
    if (colon2 == NULL)
        return -3;
    size_t len = (size_t)(colon2 - name);
    if (len == 0 || len >= sizeof r->name)
        return -4;
    memcpy(r->name, name, len);
    r->name[len] = '\0';
    r->age = atoi(colon2 + 1);
    return 0;
}

static int validate(const struct record *r) {
    if (r->age < 0) {
        printf("record %d: negative age\n", r->id);
        return 0;
    }
    if (r->name[0] < 'a' || r->name[0] > 'z')
        return 0;
    return 1;
}

static int store(const struct record *r, int *total) {
    assert(r->age < 200);
    *total += r->age;
    printf("stored %s\n", r->name);
    return 1;
}

int main(int argc, char **argv) {
    int total = 0, stored = 0;
    for (int i = 1; i < argc; i++) {
        struct record r;
        int err = parse(argv[i], &r);
        if (err != 0) {
            printf("argument %d: parse error %d\n", i, err);
            continue;
        }
        if (!validate(&r))
            continue;
        stored += store(&r, &total);
    }
    if (stored == 0) {
        printf("nothing stored\n");
        return 1;
    }
    printf("mean age %d\n", total / stored);
    return 0;
}
