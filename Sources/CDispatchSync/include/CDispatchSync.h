#ifndef CDISPATCHSYNC_H
#define CDISPATCHSYNC_H

/// A concurrent libdispatch queue reached through libdispatch's own C functions.
///
/// Swift's `DispatchQueue.sync` goes through the overlay's generic helper, which costs about 2.6 k
/// instructions a call on Linux (boxes, Optional metadata, a closure context); `dispatch_barrier_sync_f`
/// itself costs about 0.2 k. The callback store takes two barriers per download (Docs/Transports.md).

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
