#ifndef CDISPATCHSYNC_H
#define CDISPATCHSYNC_H

/// A concurrent libdispatch queue reached through libdispatch's own C functions.
///
/// Swift's `DispatchQueue.sync` goes through the overlay's generic helper, which on Linux boxes the result,
/// builds Optional metadata and a closure context on every call; `dispatch_barrier_sync_f` does none of that,
/// and the callback store takes two barriers per download (Docs/Transports.md, "Fewer runtime calls per
/// download", has the measurement).

typedef struct od_concurrent_queue *od_concurrent_queue_ref;

/// A new concurrent queue (never released: the package makes one for the process).
od_concurrent_queue_ref _Nonnull od_concurrent_queue_create(const char *_Nonnull label);

/// Runs `work(context)` as a barrier: alone on the queue, after every block submitted before it.
void od_concurrent_queue_barrier_sync(
    od_concurrent_queue_ref _Nonnull queue, void *_Nullable context, void (*_Nonnull work)(void *_Nullable));

/// Runs `work(context)` beside other readers, never beside a barrier.
void od_concurrent_queue_sync(
    od_concurrent_queue_ref _Nonnull queue, void *_Nullable context, void (*_Nonnull work)(void *_Nullable));

#endif
