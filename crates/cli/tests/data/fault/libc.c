/* A NULL passed to the C library: `strlen` faults inside libc on
   `name`, which stays NULL unless there are many arguments, and on
   `m->text`, a field, in `measure`. */
#include <stdio.h>
#include <string.h>

struct msg {
    const char *text;
};

static size_t measure(struct msg *m) {
    return strlen(m->text);
}

int main(int argc, char **argv) {
    struct msg m = {NULL};
    const char *name = NULL;
    if (argc > 5)
        name = argv[1];
    if (argc > 2)
        m.text = argv[2];
    if (argc > 1)
        return (int)measure(&m);
    printf("%zu\n", strlen(name));
    return 0;
}
