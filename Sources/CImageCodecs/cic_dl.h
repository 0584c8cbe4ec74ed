// Resolving a shim's entry-point table from a dlopen'ed library (internal: not in include/, so not
// exported to Swift). Shared by cic_heif.c and cic_tiff.c.
#ifndef CIC_DL_H
#define CIC_DL_H

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

// A zeroed entry-point table of `size` bytes for a loader, or NULL with "out of memory" in `missing`.
static inline void *cic_dl_alloc_api(size_t size, char *missing, size_t missing_len) {
    void *api = calloc(1, size);
    if (!api) snprintf(missing, missing_len, "out of memory");
    return api;
}

// Inside a loader `const T *cic_X_load(void *dl_handle, char *missing, size_t missing_len)` that has
// calloc'ed `api`: stores symbol `name` in `api->field`, or names the missing symbol in `missing`, frees
// `api` and returns NULL from the loader.
#define CIC_RESOLVE(field, name)                                         \
    do {                                                                 \
        *(void **)(&api->field) = dlsym(dl_handle, name);                \
        if (!api->field) {                                               \
            snprintf(missing, missing_len, "symbol %s not found", name); \
            free(api);                                                   \
            return NULL;                                                 \
        }                                                                \
    } while (0)

#endif
