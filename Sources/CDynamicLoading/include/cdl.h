// The one way the package's C shims fill an entry-point table from a library the Swift side opened with
// dlopen (DynamicLibrary): a static table of symbol names, each with where its pointer goes in the shim's
// struct of function pointers, resolved in one call. The Swift side loads each library once and turns the
// reason into its "install X" message.
#ifndef CDL_H
#define CDL_H

#include <stddef.h>

/// One entry point of a shim's table: the symbol, the offset of its function pointer in the shim's struct,
/// and whether the library may lack it (the pointer is then NULL, and the shim checks before calling).
typedef struct cdl_symbol {
    const char *name;
    size_t offset;
    int optional;
} cdl_symbol;

/// An entry point the load fails without, stored in `field` of struct `type`.
#define CDL_REQUIRED(type, field, name) { (name), offsetof(type, field), 0 }
/// An entry point the library may lack (newer API, encoder in a decoder-only build): NULL when absent.
#define CDL_OPTIONAL(type, field, name) { (name), offsetof(type, field), 1 }
/// The number of entries of a static table.
#define CDL_COUNT(table) (sizeof(table) / sizeof((table)[0]))

/// Stores every symbol of `table` that `handle` has at its offset in `api`. Returns 0, or -1 with "symbol NAME
/// not found" in `reason` for the first required symbol missing (optional ones are left NULL).
int cdl_resolve(void *handle, const cdl_symbol *table, size_t count, void *api, char *reason, size_t reason_len);

/// A zeroed `size`-byte table (free() it) filled by cdl_resolve, or NULL with the reason (a missing symbol or
/// "out of memory").
void *cdl_load(void *handle, const cdl_symbol *table, size_t count, size_t size, char *reason, size_t reason_len);

#endif
