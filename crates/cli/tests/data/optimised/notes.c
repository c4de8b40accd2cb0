/* An -O2 build whose labels need notes: a declaration the optimiser sank
   into a loop's exit, and lines with no instruction in the binary. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *volatile input = "w5";

int parse_mode(const char *mode) {
    char copy[64];
    int writing = 0;
    int level = 9;
    strncpy(copy, mode, sizeof copy - 1);
    copy[sizeof copy - 1] = 0;
    const char *p = copy;
    while (*p) {
        switch (*p) {
        case 'w':
            writing = 1;
            break;
        case 'r':
            writing = 0;
            break;
        default:
            if (*p >= '1' && *p <= '9')
                level = *p - '0';
        }
        p++;
    }
    return writing * 10 + level;
}

int main(void) {
    int m = parse_mode(input);
    if (m == 15)
        abort();
    printf("%d\n", m);
    return 0;
}
