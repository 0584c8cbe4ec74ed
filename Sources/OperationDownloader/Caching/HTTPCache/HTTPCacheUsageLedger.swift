import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The disk usage of a cache directory, shared by every process writing to it: a small file in the directory
/// (`.odhc-usage`: a magic and the usage in bytes) that holds the count and is locked (`flock`) around each
/// change, so that a write, the trim it may need and the new count are one step for all processes. Several
/// processes writing at once therefore keep the directory within its capacity: each write makes room before
/// its file is renamed into place.
///
/// The count is an estimate that only errs high (a replaced file's old size, files removed by hand or by another
/// program): an unknown or damaged count is rebuilt by a scan, and every trim scans. A lock held by another process for longer than
/// `lockTimeout` (a stopped process) is not waited for: that change is made unlocked and the count forgotten,
/// so the next locked change scans.
final class HTTPCacheUsageLedger: @unchecked Sendable {  // `fd`, `fileIdentity` guarded by `lock`
    static let fileName = ".odhc-usage"
    static let lockTimeout: TimeInterval = 2
    private static let magic = Array("ODHCUSE1".utf8)

    private let path: String
    private let lock = NSLock()
    private var fd: Int32 = -1
    private var fileIdentity: (device: UInt64, inode: UInt64)?

    init(directory: URL) {
        path = directory.path + "/" + Self.fileName
    }

    deinit {
        if fd >= 0 { _ = close(fd) }
    }

    /// Runs `body` with the shared count (nil when unknown: the caller scans), holding the directory's lock; the
    /// count `body` leaves is written back. Without the lock (no directory yet, a lock held too long), `body`
    /// runs with nil and what it leaves is dropped.
    func withUsage<T>(_ body: (inout Int?) throws -> T) rethrows -> T {
        try lock.withLock {
            guard openIfNeeded(), lockFile() else {
                var unknown: Int?
                let result = try body(&unknown)
                forget()
                return result
            }
            defer { _ = flock(fd, LOCK_UN) }
            var usage = readCount()
            let before = usage
            let result = try body(&usage)
            if usage != before { writeCount(usage) }
            return result
        }
    }

    // MARK: The file (under `lock`)

    /// Opens the file, again when the directory was removed and created since (a stale descriptor would lock a
    /// file no other process sees).
    private func openIfNeeded() -> Bool {
        var info = stat()
        if fd >= 0, stat(path, &info) == 0, let known = fileIdentity,
           UInt64(truncatingIfNeeded: info.st_dev) == known.device, UInt64(truncatingIfNeeded: info.st_ino) == known.inode {
            return true
        }
        if fd >= 0 {
            _ = close(fd)
            fd = -1
            fileIdentity = nil
        }
        let opened = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard opened >= 0 else { return false }
        guard fstat(opened, &info) == 0 else {
            _ = close(opened)
            return false
        }
        fd = opened
        fileIdentity = (UInt64(truncatingIfNeeded: info.st_dev), UInt64(truncatingIfNeeded: info.st_ino))
        return true
    }

    /// Takes the lock, waiting at most `lockTimeout` (pauses of 0.5 ms doubling to 16 ms: about 130 tries).
    private func lockFile() -> Bool {
        if flock(fd, LOCK_EX | LOCK_NB) == 0 { return true }
        let deadline = Date().addingTimeInterval(Self.lockTimeout)
        var pause: useconds_t = 500
        for _ in 0..<1000 {
            guard errno == EWOULDBLOCK || errno == EINTR, Date() < deadline else { return false }
            usleep(pause)
            pause = min(pause * 2, 16_000)
            if flock(fd, LOCK_EX | LOCK_NB) == 0 { return true }
        }
        return false
    }

    /// The file: the magic, then the usage as a little-endian UInt64.
    private struct Record {
        var magic: UInt64
        var usage: UInt64
    }

    private static let magicWord = HTTPCacheUsageLedger.magic.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }

    private func readCount() -> Int? {
        var record = Record(magic: 0, usage: 0)
        let count = withUnsafeMutableBytes(of: &record) { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count == MemoryLayout<Record>.size, record.magic == Self.magicWord else { return nil }
        let usage = UInt64(littleEndian: record.usage)
        return usage <= UInt64(Int.max) ? Int(usage) : nil
    }

    private func writeCount(_ usage: Int?) {
        guard let usage else {
            _ = ftruncate(fd, 0)
            return
        }
        var record = Record(magic: Self.magicWord, usage: UInt64(max(0, usage)).littleEndian)
        _ = withUnsafeBytes(of: &record) { pwrite(fd, $0.baseAddress, $0.count, 0) }
    }

    /// A change made without the lock: the count may be wrong now, so the next locked change scans.
    private func forget() {
        guard fd >= 0, flock(fd, LOCK_EX | LOCK_NB) == 0 else { return }
        _ = ftruncate(fd, 0)
        _ = flock(fd, LOCK_UN)
    }
}
