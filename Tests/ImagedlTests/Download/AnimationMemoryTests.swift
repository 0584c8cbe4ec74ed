import Foundation
@testable import ImagedlCore
import TestImages
import TestRequirements
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
@Suite(.serialized, .offThePool) struct AnimationMemoryTests {
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

    /// The same bound for the 1000×1000 × 120-frame AVIF sequence: the poster, the compressed bytes (under
    /// 0.1 MiB) and the decode's working set (the coded canvas and libavif's two pictures, about 7 MiB).
    @Test(.requires(.libavif, .avifTools))
    func bigAVIFDownloadStaysNearThePosterAndCompressedBytes() async throws {
        let executable = try #require(Self.executable, "the imagedl executable beside the test bundle")
        let server = try LoopbackHTTPServer(routes: [
            "/big.avif": .init(body: try AVIFFiles.largeSequence(side: 1000, frames: 120), contentType: "image/avif"),
            "/tiny.avif": .init(body: try AVIFFiles.data((0..<2).map { AVIFFiles.movingSquares(side: 16, frame: $0) }, ["-s", "10"]),
                                contentType: "image/avif"),
        ])
        defer { server.stop() }
        let tiny = try await Self.peakRSSOffThePool(executable, ["--json", server.url("/tiny.avif").absoluteString])
        let big = try await Self.peakRSSOffThePool(executable, ["--json", server.url("/big.avif").absoluteString])
        #expect(big.status == 0 && tiny.status == 0, "imagedl exited \(big.status) / \(tiny.status)")
        #expect(big.bytes - tiny.bytes <= Self.boundBytes,
                "peak RSS \(big.bytes >> 20) MiB downloading the big AVIF, \(tiny.bytes >> 20) MiB for a tiny one")
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

    /// Spawns the command given as arguments (output discarded) from python, and prints its exit status and
    /// `ru_maxrss` (KiB). Not spawned from this process: a child made with vfork, as `posix_spawn` makes it,
    /// inherits the parent's memory high-water mark at `exec` (the kernel keeps the larger), so a child of the
    /// test process would report the test process's own peak.
    private static let spawner = """
    import os, sys
    null = [(os.POSIX_SPAWN_OPEN, fd, "/dev/null", os.O_WRONLY, 0) for fd in (1, 2)]
    pid = os.posix_spawn(sys.argv[1], sys.argv[1:], os.environ, file_actions=null)
    _, status, usage = os.wait4(pid, 0)
    print(os.waitstatus_to_exitcode(status), usage.ru_maxrss)
    """

    /// Runs `executable` with `arguments` (output discarded) and returns its exit status and peak resident set.
    static func peakRSS(_ executable: URL, _ arguments: [String]) throws -> (status: Int32, bytes: Int) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", spawner, executable.path] + arguments
        let output = Pipe()
        process.standardOutput = output
        try ChildProcesses.run(process)
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let fields = String(decoding: data, as: UTF8.self).split(separator: " ")
        let status = try #require(fields.first.flatMap { Int32($0) }, "spawner output: \(String(decoding: data, as: UTF8.self))")
        let kibibytes = try #require(fields.last.flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) })
        return (status, kibibytes * 1024)
    }
}
