import Foundation

/// Fleet-wide single-flight for one shared cache: on a miss or a needed revalidation, one download in the
/// whole fleet fetches a cache key and the others wait for the entry it stores (Docs/Scaling.md).
///
/// In front, in-process coalescing: one flight per cache key per process. The first download of a key in this
/// process asks Redis for the lock (`RedisFlightLocks`); downloads of the same key that come meanwhile wait
/// here without touching Redis. While other processes hold locks, this process polls all the keys it waits for
/// in one pipeline every `pollInterval`: `done` ends the waits (they read the cache again), a lock that vanished
/// (its holder died, or gave up) is taken by one waiter.
///
/// Every wait has a deadline, and every error is a way out: a waiter stops at `maximumWait`; an error reply
/// (OOM, READONLY, NOAUTH, WRONGTYPE, a lock key this cache did not write) ends single-flight for that key at
/// once — the downloads fetch from the origin, and one warning names the cause; Redis unavailable ends the
/// waits too. Only a failover (Sentinel, Cluster) is waited for: a lock request that meets one is tried again
/// every poll until a primary answers or the lock's lifetime has passed, so a failover does not send every
/// process of the fleet to the origin. While this process holds locks it renews them every third of their
/// lifetime.
final class HTTPCacheFlights: @unchecked Sendable {  // its `var`s are guarded by `lock`
    enum Start {
        /// Fetch, holding the lock: finish or abandon the lease once a response (or none) is known.
        case lead(HTTPCacheFlightLease)
        /// Another download holds it, or a failover is under way: wait.
        case wait(HTTPCacheFlightWait)
        /// Redis is unavailable or refused the lock: fetch without single-flight.
        case bypass
    }

    private enum Holder {
        /// The first download's SET is on its way.
        case acquiring
        /// A download of this process holds the lock with this token.
        case thisProcess(Data)
        /// Another process holds it: this process polls.
        case otherProcess
        /// The SET met a failover: tried again with `token` every poll until `until` (monotonic nanoseconds).
        case pending(token: Data, until: UInt64)

        var isPolled: Bool {
            switch self {
            case .otherProcess, .pending: return true
            case .acquiring, .thisProcess: return false
            }
        }
    }

    private struct Flight {
        var holder: Holder
        var waiters: [HTTPCacheFlightWait] = []
    }

    let locks: RedisFlightLocks
    let pollInterval: TimeInterval
    private let lock = NSLock()
    private var flights: [String: Flight] = [:]
    private var polling = false
    private var renewing = false
    private var waitsStarted = 0
    private var longestWaitNanoseconds: UInt64 = 0
    /// Polls and renewals (never waiting for a failover).
    private let queue = DispatchQueue(label: "OperationDownloader.HTTPImageCache.flights")
    /// A finished flight's `done` and an abandoned one's release, which may wait for a failover to end.
    private let endings = DispatchQueue(label: "OperationDownloader.HTTPImageCache.flights.endings")
    private let clock: @Sendable () -> UInt64 = { DispatchTime.now().uptimeNanoseconds }

    init(locks: RedisFlightLocks, pollInterval: TimeInterval = 0.005) {
        self.locks = locks
        self.pollInterval = pollInterval
    }

    /// Flights this process holds or waits for (tests).
    var activeCount: Int { lock.withLock { flights.count } }
    /// Waits started so far, in this process (tests).
    var waitsBegun: Int { lock.withLock { waitsStarted } }
    /// The longest a wait of this process lasted, in seconds (a failover's cost; tests and the benchmark).
    var longestWait: TimeInterval { TimeInterval(lock.withLock { longestWaitNanoseconds }) / 1e9 }

    /// A wait ended (issue 38's `od_shared_fetch_wait_seconds` observes its duration here).
    func waitEnded(_ wait: HTTPCacheFlightWait) {
        let now = clock()
        let duration = now > wait.began ? now - wait.began : 0
        lock.withLock { longestWaitNanoseconds = max(longestWaitNanoseconds, duration) }
    }

    /// Starts the flight of entry `name` (the cache key's primary entry name) for one download.
    func begin(_ name: String) -> Start {
        let joined: HTTPCacheFlightWait? = lock.withLock {
            guard flights[name] != nil else {
                flights[name] = Flight(holder: .acquiring)
                return nil
            }
            let wait = makeWait(name)
            flights[name]?.waiters.append(wait)
            return wait
        }
        if let joined { return .wait(joined) }
        let token = RedisFlightLocks.newToken()
        let holder: Holder
        switch locks.acquire([(name, token)])[0] {
        case .taken:
            lock.withLock { flights[name]?.holder = .thisProcess(token) }
            scheduleRenewal()
            return .lead(HTTPCacheFlightLease(name: name, token: token, flights: self))
        case .held:
            holder = .otherProcess
        case .unavailable(.failingOver):
            holder = .pending(token: token, until: clock() + RedisDeadline.nanoseconds(locks.options.lockTimeout))
        case .refused(let message):
            refused(message)
            endFlight(name, .gaveUp)
            return .bypass
        case .unavailable(.down):
            // This download and those that joined meanwhile fetch by themselves.
            endFlight(name, .gaveUp)
            return .bypass
        }
        let wait: HTTPCacheFlightWait = lock.withLock {
            let wait = makeWait(name)
            flights[name]?.holder = holder
            flights[name]?.waiters.append(wait)
            return wait
        }
        schedulePoll()
        return .wait(wait)
    }

    /// A new wait for `name` (call under `lock`: it counts the waits).
    private func makeWait(_ name: String) -> HTTPCacheFlightWait {
        waitsStarted += 1
        let now = clock()
        return HTTPCacheFlightWait(name: name, began: now, deadline: now + RedisDeadline.nanoseconds(locks.options.maximumWait), flights: self)
    }

    /// Removes the flight of `name` and ends its waits with `outcome`.
    private func endFlight(_ name: String, _ outcome: HTTPCacheFlightWait.Outcome) {
        let waiters = lock.withLock { flights.removeValue(forKey: name)?.waiters ?? [] }
        for waiter in waiters { waiter.end(outcome) }
    }

    /// An error reply to a lock command: one warning per cause (error code), and a count.
    private func refused(_ message: String) {
        let code = message.prefix { $0 != " " }
        locks.client.events.error(code.lowercased(), node: nil)
        locks.client.events.warn("HTTPImageCache: Redis \(locks.client.displayName) answered the single-flight lock with an error "
            + "(\(message.prefix(200))): those downloads fetch from the origin at once, without waiting for another process",
            once: "lock:" + code)
    }

    // MARK: The holder's end

    func finished(_ lease: HTTPCacheFlightLease) {
        endings.async { [locks] in locks.finish(lease.name, token: lease.token) }
        endFlight(lease.name, .done)
    }

    func abandoned(_ lease: HTTPCacheFlightLease) {
        passOn(lease)
    }

    /// Hands the lock `lease` holds to this process's next waiter for its key, as it is (no Redis round trip);
    /// without one, the lock is released in Redis and a waiter elsewhere takes over.
    private func passOn(_ lease: HTTPCacheFlightLease) {
        // Bounded: each turn removes one waiter.
        while true {
            let next: HTTPCacheFlightWait?? = lock.withLock {
                guard var flight = flights[lease.name] else { return .none }
                guard !flight.waiters.isEmpty else {
                    flights.removeValue(forKey: lease.name)
                    return .some(nil)
                }
                let first = flight.waiters.removeFirst()
                flight.holder = .thisProcess(lease.token)
                flights[lease.name] = flight
                return .some(first)
            }
            guard case .some(let waiter) = next else { return }
            guard let waiter else {
                endings.async { [locks] in locks.release(lease.name, token: lease.token) }
                return
            }
            if waiter.end(.lead(HTTPCacheFlightLease(name: lease.name, token: lease.token, flights: self))) { return }
        }
    }

    func cancelled(_ wait: HTTPCacheFlightWait) {
        lock.withLock {
            guard var flight = flights[wait.name] else { return }
            flight.waiters.removeAll { $0 === wait }
            if flight.waiters.isEmpty, flight.holder.isPolled {
                flights.removeValue(forKey: wait.name)
            } else {
                flights[wait.name] = flight
            }
        }
    }

    // MARK: Polling the other processes' locks

    private func schedulePoll() {
        let start = lock.withLock {
            defer { polling = true }
            return !polling
        }
        if start { queue.asyncAfter(deadline: .now() + pollInterval) { [self] in poll() } }
    }

    private func poll() {
        let now = clock()
        var ended: [(HTTPCacheFlightWait, HTTPCacheFlightWait.Outcome)] = []
        var observed: [String] = []
        var pending: [(name: String, token: Data)] = []
        lock.withLock {
            for (name, var flight) in flights where flight.holder.isPolled {
                // Every wait has a deadline: its own (`maximumWait`), and a failover's (the lock's lifetime).
                let failoverOver: Bool
                if case .pending(_, let until) = flight.holder { failoverOver = now >= until } else { failoverOver = false }
                let late = flight.waiters.filter { failoverOver || now >= $0.deadline }
                ended += late.map { ($0, .gaveUp) }
                flight.waiters.removeAll { waiter in late.contains { $0 === waiter } }
                guard !flight.waiters.isEmpty else {
                    flights.removeValue(forKey: name)
                    continue
                }
                flights[name] = flight
                if case .pending(let token, _) = flight.holder { pending.append((name, token)) } else { observed.append(name) }
            }
        }
        for (waiter, outcome) in ended { waiter.end(outcome) }
        var free: [String] = []
        for (name, state) in zip(observed, observed.isEmpty ? [] : locks.observe(observed)) {
            switch state {
            case .held, .unavailable(.failingOver): break
            case .done: endFlight(name, .done)
            case .free: free.append(name)
            case .refused(let message):
                refused(message)
                endFlight(name, .gaveUp)
            case .unavailable(.down): endFlight(name, .gaveUp)
            }
        }
        if !pending.isEmpty { settle(pending, locks.acquire(pending, confirming: true)) }
        if !free.isEmpty {
            let attempts = free.map { (name: $0, token: RedisFlightLocks.newToken()) }
            settle(attempts, locks.acquire(attempts))
        }
        stopPollingIfIdle()
    }

    /// Applies the outcomes of lock requests made by the poll (a take-over, or a retry after a failover): a lock
    /// taken goes to this process's first waiter, the others wait for that one here.
    private func settle(_ attempts: [(name: String, token: Data)], _ outcomes: [RedisFlightLocks.Acquired]) {
        var won: [(String, Data)] = []
        var unwanted: [(String, Data)] = []
        for ((name, token), outcome) in zip(attempts, outcomes) {
            switch outcome {
            case .taken:
                let wanted: Bool = lock.withLock {
                    guard flights[name] != nil else { return false }  // every waiter was cancelled meanwhile
                    flights[name]?.holder = .thisProcess(token)
                    return true
                }
                if wanted { won.append((name, token)) } else { unwanted.append((name, token)) }
            case .held:
                lock.withLock { if flights[name]?.holder.isPolled == true { flights[name]?.holder = .otherProcess } }
            case .unavailable(.failingOver):
                lock.withLock {
                    if case .otherProcess? = flights[name]?.holder {
                        flights[name]?.holder = .pending(token: token, until: clock() + RedisDeadline.nanoseconds(locks.options.lockTimeout))
                    }
                }
            case .refused(let message):
                refused(message)
                endFlight(name, .gaveUp)
            case .unavailable(.down):
                endFlight(name, .gaveUp)
            }
        }
        for (name, token) in unwanted { endings.async { [locks] in locks.release(name, token: token) } }
        if !won.isEmpty { scheduleRenewal() }
        for (name, token) in won { passOn(HTTPCacheFlightLease(name: name, token: token, flights: self)) }
    }

    private func stopPollingIfIdle() {
        let again: Bool = lock.withLock {
            let waiting = flights.values.contains { $0.holder.isPolled }
            polling = waiting
            return waiting
        }
        if again { queue.asyncAfter(deadline: .now() + pollInterval) { [self] in poll() } }
    }

    // MARK: Renewing this process's locks

    private func scheduleRenewal() {
        let start = lock.withLock {
            defer { renewing = true }
            return !renewing
        }
        if start { queue.asyncAfter(deadline: .now() + locks.options.lockTimeout / 3) { [self] in renew() } }
    }

    private func renew() {
        let held: [(name: String, token: Data)] = lock.withLock {
            flights.compactMap { name, flight in
                if case .thisProcess(let token) = flight.holder { return (name, token) }
                return nil
            }
        }
        if !held.isEmpty { locks.renew(held) }
        let again: Bool = lock.withLock {
            let holding = flights.values.contains { if case .thisProcess = $0.holder { return true } else { return false } }
            renewing = holding
            return holding
        }
        if again { queue.asyncAfter(deadline: .now() + locks.options.lockTimeout / 3) { [self] in renew() } }
    }
}
