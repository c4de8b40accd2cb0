static int limit = 3;

static void fail(int x) {
    volatile int *p = 0;
    *p = x;
}

int check(const int *v, int n) {
    int errors = 0;
    for (int i = 0; i < n; i++) {
        if (v[i] > limit)
            fail(v[i]);
        if (v[i] < 0)
            errors++;
    }
    return errors;
}
