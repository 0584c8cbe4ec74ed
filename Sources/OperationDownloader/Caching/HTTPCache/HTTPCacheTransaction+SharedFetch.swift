import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Where one download stands in the fleet-wide single-flight of its cache key (`HTTPCacheFlights`).
enum SharedFetchPhase {
    /// Not started (or not a shared cache).
    case none
    /// This download fetches for the fleet, holding the lock.
    case leading(HTTPCacheFlightLease)
    /// Another download (here or in another process) fetches; this one waits.
    case waiting(HTTPCacheFlightWait)
    /// Another download's fetch ended with a response while this one waited: the cache holds what it got.
    case doneByAnother
    /// Over for this download: it reads the cache again and, needing the network, sends without the lock.
    case settled
}

/// Fleet-wide single-flight, at the transaction's fixed points (see `HTTPCacheTransaction`): a request that
/// would fetch a URL into a shared cache (a miss, or a revalidation) first takes the URL's lock; a download that
/// finds it taken waits (`Start.waitForSharedFetch`) and then plans again, serving the entry the holder stored.
/// The holder's lease ends when its response is known (`finish`: the waiters read the cache) or when the
/// download ends without one (`abandon`: a waiter takes over).
extension HTTPCacheTransaction {
    /// What an attempt does: `begin`'s answer, or a wait for another download's fetch.
    enum SharedStart {
        case proceed(Start)
        /// Another download of the fleet (or of this process) is fetching this URL into the shared cache: wait
        /// for it (`whenSharedFetchEnds`), then call `beginSharing` again.
        case wait(HTTPCacheFlightWait)
    }

    /// `begin`, joined to the fleet's single-flight when the cache is shared: a storing request (a miss, a
    /// revalidation) first takes the URL's lock, or waits when another download holds it. A download that took
    /// the lock over after waiting and finds the entry stored meanwhile ends its lease.
    func beginSharing(now: Date = Date(), acceptsStatus: @escaping @Sendable (Int) -> Bool) -> SharedStart {
        let start = begin(now: now, acceptsStatus: acceptsStatus)
        guard let cache, let flights = cache.layer.flights else { return .proceed(start) }
        guard case .send(let request) = start else {
            finishSharedFetch()
            return .proceed(start)
        }
        let phase = state.withLock { $0.sharedFetch }
        if case .doneByAnother = phase {
            state.withLock { $0.sharedFetch = .settled }
            // A revalidation (`.reloadRevalidatingCacheData`: a stale-while-revalidate refresh, or the caller's
            // own) that another process has just made: its fresh result is the answer, not a second request.
            // (Judged by the caller's request: the one sent carries the revalidation's own `max-age=0`.)
            if request.cachePolicy == .reloadRevalidatingCacheData, let stored = cache.storedResponse(for: originalRequest),
               stored.hasBody, stored.use(for: HTTPHeaderFields(request: originalRequest), now: now) == .fresh {
                return .proceed(.serveFromCache(stored.served(at: now)))
            }
            return .proceed(start)
        }
        guard case .none = phase, sendsStoringRequest, let name = Self.flightName(for: request) else { return .proceed(start) }
        switch flights.begin(name) {
        case .lead(let lease):
            state.withLock { $0.sharedFetch = .leading(lease) }
            return .proceed(start)
        case .wait(let wait):
            state.withLock { $0.sharedFetch = .waiting(wait) }
            return .wait(wait)
        case .bypass:
            state.withLock { $0.sharedFetch = .settled }
            return .proceed(start)
        }
    }

    /// The cache key's lock name: its primary entry name. Only plain GETs take part (not a Range request).
    private static func flightName(for request: URLRequest) -> String? {
        guard (request.httpMethod ?? "GET").uppercased() == "GET", request.value(forHTTPHeaderField: "Range") == nil,
              let url = request.url, let key = HTTPCacheKey.key(for: url) else { return nil }
        return HTTPCacheKey.fileName(for: key)
    }

    /// Runs `resume` (off the caller's thread) when `wait` ends, with the outcome recorded: leading after a
    /// take-over, settled otherwise. The caller then calls `begin` again (or ends a cancelled download).
    func whenSharedFetchEnds(_ wait: HTTPCacheFlightWait, _ resume: @escaping @Sendable () -> Void) {
        wait.notify { [state] outcome in
            state.withLock { state in
                switch outcome {
                case .lead(let lease): state.sharedFetch = .leading(lease)
                case .done: state.sharedFetch = .doneByAnother
                case .gaveUp, .cancelled: state.sharedFetch = .settled
                }
            }
            resume()
        }
    }

    /// The download was cancelled while waiting: the wait ends now (`.cancelled`).
    func cancelSharedFetchWait() {
        if case .waiting(let wait) = state.withLock({ $0.sharedFetch }) { wait.cancel() }
    }

    /// After a response's disposition: the holder's lease ends once the response is known, except while the
    /// body is still to come (`.proceed` with an accepted status: `completed` ends it) or the request is sent
    /// again (`.refetch`). Queued cache writes (a 304's refresh) land before the waiters are told.
    func settleSharedFetch(after disposition: ResponseDisposition, statusCode: Int) {
        switch disposition {
        case .refetch: return
        case .proceed where sendsStoringRequest && acceptsStatus(statusCode): return
        default: break
        }
        guard case .leading(let lease) = state.withLock({ $0.sharedFetch }) else { return }
        state.withLock { $0.sharedFetch = .settled }
        guard let cache else { return lease.finish() }
        DispatchQueue.global().async {
            cache.waitForQueuedWrites()
            lease.finish()
        }
    }

    /// The response is stored (or was not storable): the waiters read the cache.
    func finishSharedFetch() {
        let lease: HTTPCacheFlightLease? = state.withLock { state in
            guard case .leading(let lease) = state.sharedFetch else { return nil }
            state.sharedFetch = .settled
            return lease
        }
        lease?.finish()
    }

    /// The download ends (released): a lease still held means no response came, so a waiter takes over; a
    /// wait still running is cancelled.
    func abandonSharedFetch() {
        let phase: SharedFetchPhase = state.withLock { state in
            defer { state.sharedFetch = .settled }
            return state.sharedFetch
        }
        switch phase {
        case .leading(let lease): lease.abandon()
        case .waiting(let wait): wait.cancel()
        case .none, .doneByAnother, .settled: break
        }
    }
}
