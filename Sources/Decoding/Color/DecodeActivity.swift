import Synchronization

/// How many decodes are running in this process right now, so work that could be split over cores (the
/// colour conversion of a large image) is split only when the caller is not already parallel: a thumbnailer
/// with a worker per core, or a downloader decoding several images at once, keeps one thread per image.
final class DecodeActivity: Sendable {
    static let shared = DecodeActivity()

    private let running = Atomic<Int>(0)

    /// True when at most one decode (the caller's own) is running.
    var isAlone: Bool { running.load(ordering: .relaxed) <= 1 }

    /// Runs `body` counted as a decode.
    func during<T>(_ body: () throws -> T) rethrows -> T {
        running.add(1, ordering: .relaxed)
        defer { running.subtract(1, ordering: .relaxed) }
        return try body()
    }
}
