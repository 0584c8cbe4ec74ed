import Foundation

/// The table that gives every `ImageTarget` its per-object state without stored properties (Linux has no
/// Objective-C associated objects): `ObjectIdentifier` → state holding the target weakly.
///
/// An identifier can be reused by a new object once the old one is freed, so a lookup also checks that the
/// state's weak reference is this very object; a state whose target is gone is replaced (its download is
/// cancelled). States of released targets are dropped when their download ends, and swept (downloads
/// cancelled) whenever the table has doubled since the last sweep, so the table stays proportional to the
/// live targets.
final class ImageTargetRegistry: @unchecked Sendable {  // `lock` guards `states`, `sweepThreshold`, `downloaders`
    static let shared = ImageTargetRegistry()

    private static let minimumSweepThreshold = 256
    private let lock = NSLock()
    private var states: [ObjectIdentifier: ImageTargetState] = [:]
    private var sweepThreshold = ImageTargetRegistry.minimumSweepThreshold
    private var downloaders: [ObjectIdentifier: ImageDownloader] = [:]

    /// The state of `target`, created on first use.
    func state(for target: any ImageTarget) -> ImageTargetState {
        let identifier = ObjectIdentifier(target)
        var released: [ImageTargetState] = []
        let state: ImageTargetState = lock.withLock {
            if let existing = states[identifier] {
                if existing.target === target { return existing }
                released.append(existing)  // a freed object's state at a reused address
            }
            let fresh = ImageTargetState(target: target)
            states[identifier] = fresh
            if states.count >= sweepThreshold {
                released += removeReleasedStates()
                sweepThreshold = max(Self.minimumSweepThreshold, states.count * 2)
            }
            return fresh
        }
        for stale in released { stale.cancelIfTargetReleased() }
        return state
    }

    /// The state of `target` if it has one (never creates).
    func existingState(for target: any ImageTarget) -> ImageTargetState? {
        lock.withLock {
            guard let existing = states[ObjectIdentifier(target)], existing.target === target else { return nil }
            return existing
        }
    }

    /// Drops `state` if its target is gone (called when its download ended or was cancelled).
    func forget(_ state: ImageTargetState) {
        lock.withLock {
            if state.target == nil, states[state.identifier] === state { states[state.identifier] = nil }
        }
    }

    /// Removes every state whose target is gone and cancels their downloads; returns how many were removed.
    @discardableResult
    func sweepReleasedTargets() -> Int {
        let released = lock.withLock { removeReleasedStates() }
        for state in released { state.cancelIfTargetReleased() }
        return released.count
    }

    /// Targets with state (live ones, plus released ones not yet swept).
    var count: Int { lock.withLock { states.count } }

    /// Whether the table holds state for this identifier.
    func hasState(for identifier: ObjectIdentifier) -> Bool {
        lock.withLock { states[identifier] != nil }
    }

    /// Under `lock`.
    private func removeReleasedStates() -> [ImageTargetState] {
        let released = states.values.filter { $0.target == nil }
        for state in released { states[state.identifier] = nil }
        return released
    }

    // MARK: - Shared downloaders

    /// The downloader set for `type`, else `ImageDownloader.shared`.
    func downloader(for type: Any.Type) -> ImageDownloader {
        lock.withLock { downloaders[ObjectIdentifier(type)] } ?? ImageDownloader.shared
    }

    func setDownloader(_ downloader: ImageDownloader, for type: Any.Type) {
        lock.withLock { downloaders[ObjectIdentifier(type)] = downloader }
    }
}
