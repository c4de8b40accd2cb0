/* Recursion: a prefix-notation calculator. "+ 1 * 2 / 6 - 3 3" is
 * 1 + 2 * (6 / (3 - 3)): the division by zero (SIGFPE) happens four
 * calls deep in eval, which also recurses through eval_operands.
 */
#include <stdio.h>
#include <stdlib.h>

struct cursor {
    const char *s;
    int depth;
    int max_depth;
};

static int eval(struct cursor *c);

static void skip_spaces(struct cursor *c) {
    while (*c->s == ' ')
        c->s++;
}

static int number(struct cursor *c) {
    int n = 0;
    while (*c->s >= '0' && *c->s <= '9') {
        n = n * 10 + (*c->s - '0');
        c->s++;
    }
    return n;
}

static int apply(char op, int a, int b) {
    switch (op) {
    case '+':
        return a + b;
    case '-':
        return a - b;
    case '*':
        return a * b;
    case '/':
        return a / b;
    case '%':
        if (b == 0) {
            printf("modulo by zero\n");
            return 0;
        }
        return a % b;
    default:
        printf("unknown operator %c\n", op);
        return 0;
    }
}

static int eval_operands(struct cursor *c, char op) {
    int a = eval(c);
    return apply(op, a, eval(c));
}

static int eval(struct cursor *c) {
    skip_spaces(c);
    if (*c->s == '\0') {
        printf("unexpected end\n");
        return 0;
    }
    if (*c->s >= '0' && *c->s <= '9')
        return number(c);
    char op = *c->s++;
    c->depth++;
    if (c->depth > c->max_depth) {
        c->max_depth = c->depth;
        printf("depth %d\n", c->depth);
    }
    int v = eval_operands(c, op);
    c->depth--;
    return v;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        printf("usage: recursion EXPR\n");
        return 2;
    }
    struct cursor c = {argv[1], 0, 0};
    int v = eval(&c);
    printf("= %d\n", v);
    return 0;
}
