// Symbol tables resolved with dlsym (see cdl.h).
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include "cdl.h"

int cdl_resolve(void *handle, const cdl_symbol *table, size_t count, void *api, char *reason, size_t reason_len) {
    for (size_t i = 0; i < count; i++) {
        void *symbol = dlsym(handle, table[i].name);
        if (!symbol && !table[i].optional) {
            snprintf(reason, reason_len, "symbol %s not found", table[i].name);
            return -1;
        }
        // POSIX guarantees a data pointer from dlsym converts to the function pointer stored here.
        *(void **)((char *)api + table[i].offset) = symbol;
    }
    return 0;
}

void *cdl_load(void *handle, const cdl_symbol *table, size_t count, size_t size, char *reason, size_t reason_len) {
    void *api = calloc(1, size);
    if (!api) {
        snprintf(reason, reason_len, "out of memory");
        return NULL;
    }
    if (cdl_resolve(handle, table, count, api, reason, reason_len) != 0) {
        free(api);
        return NULL;
    }
    return api;
}
