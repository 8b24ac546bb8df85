/* The list of execution providers built into this library. */
#include <string.h>
#include "provider.h"

extern const cort_provider_vtable cort_provider_cpu;
#ifdef CORT_HAVE_XNNPACK
extern const cort_provider_vtable cort_provider_xnnpack;
#endif

const cort_provider_vtable *const cort_provider_registry[] = {
    &cort_provider_cpu,
#ifdef CORT_HAVE_XNNPACK
    &cort_provider_xnnpack,
#endif
    NULL
};

const cort_provider_vtable *cort_provider_find(const char *name) {
    for (const cort_provider_vtable *const *p = cort_provider_registry; *p; p++)
        if (!strcmp((*p)->name, name)) return *p;
    return NULL;
}

const cort_provider_vtable *cort_provider_default(void) { return &cort_provider_cpu; }
