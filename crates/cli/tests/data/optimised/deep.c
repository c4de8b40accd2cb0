/* A recursive-descent parser of nested parentheses, built at -O2: term
   and factor are inlined into expr, so each physical frame of the deep
   recursion holds three source frames. It divides by the value of the
   innermost expression, which the input makes 0. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *p;
static int depth, deepest;

static int expr(void);

static int number(void) {
    int v = 0;
    while (*p >= '0' && *p <= '9')
        v = v * 10 + (*p++ - '0');
    return v;
}

static int factor(void) {
    if (*p == '(') {
        p++;
        depth++;
        if (depth > deepest)
            deepest = depth;
        int v = expr();
        if (*p == ')')
            p++;
        depth--;
        return v;
    }
    return number();
}

static int term(void) {
    int v = factor();
    while (*p == '*' || *p == '/') {
        char op = *p++;
        int w = factor();
        v = op == '*' ? v * w : v / w;
    }
    return v;
}

static int expr(void) {
    int v = term();
    while (*p == '+' || *p == '-') {
        char op = *p++;
        int w = term();
        v = op == '+' ? v + w : v - w;
    }
    return v;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 60;
    char *s = malloc(4 * (size_t)n + 16);
    char *q = s;
    for (int i = 0; i < n; i++)
        *q++ = '(';
    strcpy(q, "1/0");
    q += 3;
    for (int i = 0; i < n; i++)
        *q++ = ')';
    *q = 0;
    p = s;
    int v = expr();
    printf("%d (depth %d)\n", v, deepest);
    free(s);
    return 0;
}
