import Foundation

/// Fleet-wide single-flight for one shared cache: on a miss or a needed revalidation, one download in the
/// whole fleet fetches a cache key and the others wait for the entry it stores (Docs/Scaling.md).
///
/// In front, in-process coalescing: one flight per cache key per process. The first download of a key in this
/// process asks Redis for the lock (`RedisFlightLocks`); downloads of the same key that come meanwhile wait
/// here without touching Redis. When another process holds the lock, this process polls its state for all
/// waited keys in one pipeline every `pollInterval`: `done` ends the waits (they read the cache again), a
/// lock that vanished (its holder died, or gave up) is taken by one waiter, and a wait past `maximumWait` or
/// a Redis that became unavailable lets the waiters fetch by themselves. While this process holds locks it
/// renews them every third of their lifetime.
final class HTTPCacheFlights: @unchecked Sendable {  // `flights`, `polling`, `renewing` guarded by `lock`
    enum Start {
        /// Fetch, holding the lock: finish or abandon the lease once a response (or none) is known.
        case lead(HTTPCacheFlightLease)
        /// Another download holds it: wait.
        case wait(HTTPCacheFlightWait)
        /// Redis is unavailable: fetch without single-flight.
        case bypass
    }

    private enum Holder {
        /// The first download's SET is on its way.
        case acquiring
        /// A download of this process holds the lock with this token.
        case thisProcess(Data)
        /// Another process holds it: this process polls.
        case otherProcess
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
    private let queue = DispatchQueue(label: "OperationDownloader.HTTPImageCache.flights")
    private let clock: @Sendable () -> UInt64 = { DispatchTime.now().uptimeNanoseconds }

    init(locks: RedisFlightLocks, pollInterval: TimeInterval = 0.005) {
        self.locks = locks
        self.pollInterval = pollInterval
    }

    /// Flights this process holds or waits for (tests).
    var activeCount: Int { lock.withLock { flights.count } }
    /// Waits started so far, in this process (tests).
    var waitsBegun: Int { lock.withLock { waitsStarted } }

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
        let token = Data(UUID().uuidString.utf8)
        switch locks.acquire([name], token: token)?.first {
        case true?:
            lock.withLock { flights[name]?.holder = .thisProcess(token) }
            scheduleRenewal()
            return .lead(HTTPCacheFlightLease(name: name, token: token, flights: self))
        case false?:
            let wait: HTTPCacheFlightWait = lock.withLock {
                let wait = makeWait(name)
                flights[name]?.holder = .otherProcess
                flights[name]?.waiters.append(wait)
                return wait
            }
            schedulePoll()
            return .wait(wait)
        case nil:
            // Redis is unavailable: this download and those that joined meanwhile fetch by themselves.
            let joinedMeanwhile = lock.withLock { flights.removeValue(forKey: name)?.waiters ?? [] }
            for waiter in joinedMeanwhile { waiter.end(.gaveUp) }
            return .bypass
        }
    }

    /// A new wait for `name` (call under `lock`: it counts the waits).
    private func makeWait(_ name: String) -> HTTPCacheFlightWait {
        waitsStarted += 1
        let deadline = clock() + UInt64(max(0, min(locks.options.maximumWait, 3600)) * 1_000_000_000)
        return HTTPCacheFlightWait(name: name, deadline: deadline, flights: self)
    }

    // MARK: The holder's end

    func finished(_ lease: HTTPCacheFlightLease) {
        let waiters = lock.withLock { flights.removeValue(forKey: lease.name)?.waiters ?? [] }
        queue.async { [locks] in locks.finish(lease.name, token: lease.token) }
        for waiter in waiters { waiter.end(.done) }
    }

    func abandoned(_ lease: HTTPCacheFlightLease) {
        passOn(lease)
    }

    /// Hands the lock `lease` holds to this process's next waiter for its key, as it is (no Redis round trip);
    /// without one, the lock is released in Redis and a waiter elsewhere takes over.
    private func passOn(_ lease: HTTPCacheFlightLease) {
        while true {
            let next: HTTPCacheFlightWait?? = lock.withLock {
                guard var flight = flights[lease.name] else { return .none }
                guard !flight.waiters.isEmpty else {
                    flights.removeValue(forKey: lease.name)
                    return .some(nil)
                }
                let first = flight.waiters.removeFirst()
                flights[lease.name] = flight
                return .some(first)
            }
            guard case .some(let waiter) = next else { return }
            guard let waiter else {
                queue.async { [locks] in locks.release(lease.name, token: lease.token) }
                return
            }
            if waiter.end(.lead(HTTPCacheFlightLease(name: lease.name, token: lease.token, flights: self))) { return }
        }
    }

    func cancelled(_ wait: HTTPCacheFlightWait) {
        lock.withLock {
            guard var flight = flights[wait.name] else { return }
            flight.waiters.removeAll { $0 === wait }
            if flight.waiters.isEmpty, case .otherProcess = flight.holder {
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
        let names: [String] = lock.withLock {
            flights.compactMap { name, flight in
                if case .otherProcess = flight.holder { return name }
                return nil
            }
        }
        guard !names.isEmpty else {
            stopPollingIfIdle()
            return
        }
        let observed = locks.observe(names)
        var free: [String] = []
        var ended: [(HTTPCacheFlightWait, HTTPCacheFlightWait.Outcome)] = []
        let now = clock()
        lock.withLock {
            for (index, name) in names.enumerated() {
                guard var flight = flights[name], case .otherProcess = flight.holder else { continue }
                switch observed?[index] {
                case nil:
                    ended += flight.waiters.map { ($0, .gaveUp) }
                    flights.removeValue(forKey: name)
                case .done?:
                    ended += flight.waiters.map { ($0, .done) }
                    flights.removeValue(forKey: name)
                case .free?:
                    free.append(name)
                case .held?:
                    let (late, waiting) = flight.waiters.partitioned { now >= $0.deadline }
                    ended += late.map { ($0, .gaveUp) }
                    flight.waiters = waiting
                    if waiting.isEmpty { flights.removeValue(forKey: name) } else { flights[name] = flight }
                }
            }
        }
        for (waiter, outcome) in ended { waiter.end(outcome) }
        if !free.isEmpty { takeOver(free) }
        stopPollingIfIdle()
    }

    /// The locks of `names` vanished: try to take them; each one taken goes to this process's first waiter
    /// still waiting, and the others wait for that one here.
    private func takeOver(_ names: [String]) {
        let token = Data(UUID().uuidString.utf8)
        guard let taken = locks.acquire(names, token: token) else { return }
        var won: [String] = []
        var unwanted: [String] = []
        lock.withLock {
            for (name, acquired) in zip(names, taken) where acquired {
                guard flights[name] != nil else {
                    unwanted.append(name)  // every waiter of it was cancelled meanwhile
                    continue
                }
                flights[name]?.holder = .thisProcess(token)
                won.append(name)
            }
        }
        for name in unwanted { locks.release(name, token: token) }
        if !won.isEmpty { scheduleRenewal() }
        for name in won { passOn(HTTPCacheFlightLease(name: name, token: token, flights: self)) }
    }

    private func stopPollingIfIdle() {
        let again: Bool = lock.withLock {
            let waiting = flights.values.contains { if case .otherProcess = $0.holder { return true } else { return false } }
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

private extension Array {
    /// (elements matching `predicate`, the others), each in order.
    func partitioned(by predicate: (Element) -> Bool) -> ([Element], [Element]) {
        var matching: [Element] = []
        var rest: [Element] = []
        for element in self {
            if predicate(element) { matching.append(element) } else { rest.append(element) }
        }
        return (matching, rest)
    }
}
