#include "CDispatchSync.h"

#if __has_include(<dispatch/dispatch.h>)
#include <dispatch/dispatch.h>
#define OD_QUEUE(queue) ((dispatch_queue_t)(void *)(queue))
#else
// Linux: libdispatch ships with the Swift toolchain, whose headers are not on a C target's include path.
// These are its stable C entry points (dispatch/queue.h); the library is linked through Foundation.
struct dispatch_queue_s;
struct dispatch_queue_attr_s;
extern struct dispatch_queue_attr_s _dispatch_queue_attr_concurrent;
struct dispatch_queue_s *dispatch_queue_create(const char *label, struct dispatch_queue_attr_s *attr);
void dispatch_barrier_sync_f(struct dispatch_queue_s *queue, void *context, void (*work)(void *));
void dispatch_sync_f(struct dispatch_queue_s *queue, void *context, void (*work)(void *));
#define DISPATCH_QUEUE_CONCURRENT (&_dispatch_queue_attr_concurrent)
#define OD_QUEUE(queue) ((struct dispatch_queue_s *)(void *)(queue))
#endif

od_concurrent_queue_ref od_concurrent_queue_create(const char *label) {
    return (od_concurrent_queue_ref)(void *)dispatch_queue_create(label, DISPATCH_QUEUE_CONCURRENT);
}

void od_concurrent_queue_barrier_sync(od_concurrent_queue_ref queue, void *context, void (*work)(void *)) {
    dispatch_barrier_sync_f(OD_QUEUE(queue), context, work);
}

void od_concurrent_queue_sync(od_concurrent_queue_ref queue, void *context, void (*work)(void *)) {
    dispatch_sync_f(OD_QUEUE(queue), context, work);
}
