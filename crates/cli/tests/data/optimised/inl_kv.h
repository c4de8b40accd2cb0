struct entry { const char *key; int val; struct entry *next; };
struct entry *kv_find(struct entry *head, const char *key);
