/* Switch: a tiny stack machine. Each character of the program is an
 * instruction; cases fall through, and 'd' reads through a NULL pointer
 * when the stack is empty ("switch 12+3*p.d": d pops an empty stack).
 */
#include <stdio.h>
#include <stdlib.h>

static int stack[32];
static int sp;

static int *top(void) {
    return sp > 0 ? &stack[sp - 1] : NULL;
}

static void push(int v) {
    if (sp < 32)
        stack[sp++] = v;
}

static int step(char op) {
    int a, b;
    switch (op) {
    case '0': case '1': case '2': case '3': case '4':
    case '5': case '6': case '7': case '8': case '9':
        push(op - '0');
        break;
    case '+':
    case '*':
        if (sp < 2) {
            printf("stack underflow at %c\n", op);
            return -1;
        }
        b = stack[--sp];
        a = stack[--sp];
        push(op == '+' ? a + b : a * b);
        break;
    case 'p':
        printf("%d\n", *top());
        /* fall through */
    case '.':
        sp--;
        break;
    case 'd':
        push(*top());
        break;
    case ' ':
        break;
    default:
        printf("bad instruction %c\n", op);
        return -1;
    }
    return 0;
}

static int run(const char *program) {
    int errors = 0;
    for (const char *p = program; *p; p++) {
        switch (step(*p)) {
        case 0:
            continue;
        case -1:
            errors++;
            if (errors > 3)
                return errors;
            break;
        }
    }
    return errors;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        printf("usage: switch PROGRAM\n");
        return 2;
    }
    int errors = run(argv[1]);
    printf("%d errors, %d left on the stack\n", errors, sp);
    return errors != 0;
}
