/* A NULL passed to the C library: `strlen` faults inside libc on
   `name`, which stays NULL unless there are many arguments, on
   `m->text`, a field, in `measure`, and on `base`, the text after a
   '/' that is not there (NULL + 1). */
#include <stdio.h>
#include <string.h>

struct msg {
    const char *text;
};

static size_t measure(struct msg *m) {
    return strlen(m->text);
}

static size_t base_length(const char *path) {
    const char *base = strrchr(path, '/') + 1;
    return strlen(base);
}

int main(int argc, char **argv) {
    struct msg m = {NULL};
    const char *name = NULL;
    if (argc > 5)
        name = argv[1];
    if (argc > 2)
        m.text = argv[2];
    if (argc > 3)
        return (int)base_length(argv[0] + strlen(argv[0]));
    if (argc > 1)
        return (int)measure(&m);
    printf("%zu\n", strlen(name));
    return 0;
}
