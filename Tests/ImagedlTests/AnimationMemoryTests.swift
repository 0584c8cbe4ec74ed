import Foundation
@testable import ImagedlCore
import TestImages
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Peak memory of a real `imagedl` process downloading the 1000×1000 × 120-frame GIF, measured by the kernel
/// (`wait4`'s `ru_maxrss`) against the same process downloading a tiny image.
///
/// Bound: the big download may use at most 48 MiB more than the tiny one: the poster (3.8 MiB), the compressed
/// bytes (under 1 MiB, held by the transfer and the animation), the decode's working canvases (the packed
/// canvas, one frame's indices and the poster's bytes: about 9 MiB) and the memory cache's copy of the poster,
/// with room for allocator slack. Every frame held at once, as the eager decoder did, is 458 MiB.
@Suite(.serialized) struct AnimationMemoryTests {
    static let boundBytes = 48 << 20

    @Test func bigGIFDownloadStaysNearThePosterAndCompressedBytes() async throws {
        let executable = try #require(Self.executable, "the imagedl executable beside the test bundle")
        let server = try LoopbackHTTPServer(routes: [
            "/big.gif": .init(body: BigAnimationTests.gif1000, contentType: "image/gif"),
            "/tiny.gif": .init(body: LargeAnimations.gif(side: 16, frames: 2), contentType: "image/gif"),
        ])
        defer { server.stop() }
        let tiny = try await Self.peakRSSOffThePool(executable, ["--json", server.url("/tiny.gif").absoluteString])
        let big = try await Self.peakRSSOffThePool(executable, ["--json", server.url("/big.gif").absoluteString])
        #expect(big.status == 0 && tiny.status == 0, "imagedl exited \(big.status) / \(tiny.status)")
        #expect(big.bytes - tiny.bytes <= Self.boundBytes,
                "peak RSS \(big.bytes >> 20) MiB downloading the big GIF, \(tiny.bytes >> 20) MiB for a tiny one")
    }

    /// The built `imagedl` beside the test bundle.
    static var executable: URL? {
        [Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent()]
            .map { $0.appendingPathComponent("imagedl") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    /// `peakRSS` on a dispatch thread: the child runs for seconds, and waiting for it on the cooperative pool
    /// (two threads here) would stall every other test meanwhile.
    static func peakRSSOffThePool(_ executable: URL, _ arguments: [String]) async throws -> (status: Int32, bytes: Int) {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try peakRSS(executable, arguments) })
            }
        }
    }

    /// Runs `executable` with `arguments` (output discarded) and returns its exit status and peak resident set.
    static func peakRSS(_ executable: URL, _ arguments: [String]) throws -> (status: Int32, bytes: Int) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable.path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable.path, &actions, nil, argv, environ)
        try #require(spawned == 0, "posix_spawn failed: \(spawned)")
        var status: Int32 = 0
        var usage = rusage()
        try #require(wait4(pid, &status, 0, &usage) == pid)
        let exitStatus = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : -1
        return (exitStatus, usage.ru_maxrss * 1024)
    }
}
