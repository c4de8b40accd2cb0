#include "inl_kv.h"

struct entry *kv_find(struct entry *head, const char *key)
{
    for (struct entry *e = head; e; e = e->next) {
        if (e->key[0] == key[0])
            return e;
    }
    return 0;
}
