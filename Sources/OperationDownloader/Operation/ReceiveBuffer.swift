import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The body of one attempt as it arrives: appended chunk by chunk, read as `Data` without a copy.
///
/// A small body lives in an ordinary `Data`. One of `pageBackedThreshold` bytes or more lives in its own
/// anonymous memory mapping (`PageRegion`), which goes back to the system the moment the last `Data` over
/// it is released. Through malloc the same bodies stayed in the process: glibc raises its mmap threshold
/// after the first multi-megabyte free, so later bodies land in per-thread arenas, which keep the freed
/// space (Docs/Benchmarks.md, "Where the memory goes", has what that cost). Pages the
/// body never reaches (a lying `Content-Length`) are never touched, so they cost address space, not memory.
struct ReceiveBuffer {
    /// Bodies reaching this size move to a mapping of their own (page-granular: at most 4 KiB of slack).
    static let pageBackedThreshold = 256 << 10

    private var small = Data()
    /// The mapping once the body is large; `count` bytes of it are written.
    private var region: PageRegion?
    /// Bytes received.
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    /// Room for `expected` bytes up front (the announced `Content-Length`, already capped by the caller).
    /// Only before the first byte; a mapping is made when `expected` is large, and falls back to `Data`.
    mutating func reserve(_ expected: Int) {
        guard count == 0, expected > 0 else { return }
        if expected >= Self.pageBackedThreshold, let mapped = PageRegion(capacity: expected) {
            region = mapped
            small = Data()
        } else if region == nil {
            small = Data(capacity: expected)
        }
    }

    /// Appends `bytes` after the ones received. Bytes already written are never written again, so every
    /// `data` taken earlier keeps seeing what it saw.
    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        let total = count + bytes.count
        if region == nil, total >= Self.pageBackedThreshold {
            moveToRegion(capacity: total)
        }
        if let current = region {
            var target = current
            if total > current.capacity {
                // Grown by doubling into a new mapping: the old one stays valid for the views that use it.
                guard let grown = PageRegion(capacity: max(total, current.capacity * 2)) else {
                    fallBackToData(adding: bytes)
                    return
                }
                grown.base.copyMemory(from: current.base, byteCount: count)
                region = grown
                target = grown
            }
            (target.base + count).copyMemory(from: source, byteCount: bytes.count)
        } else {
            small.append(source.assumingMemoryBound(to: UInt8.self), count: bytes.count)
        }
        count = total
    }

    /// The bytes received so far, sharing the buffer's memory (a mapping stays alive while any view does).
    var data: Data {
        guard let region, count > 0 else { return small }
        return Data(bytesNoCopy: region.base, count: count, deallocator: .custom { _, _ in
            withExtendedLifetime(region) {}
        })
    }

    private mutating func moveToRegion(capacity: Int) {
        guard let mapped = PageRegion(capacity: max(capacity, small.count * 2)) else { return }
        small.withUnsafeBytes { bytes in
            if let base = bytes.baseAddress, !bytes.isEmpty { mapped.base.copyMemory(from: base, byteCount: bytes.count) }
        }
        region = mapped
        small = Data()
    }

    /// No mapping could be made (address space or memory exhausted): the body continues in `Data`.
    private mutating func fallBackToData(adding bytes: UnsafeRawBufferPointer) {
        var copy = data
        copy.append(bytes.bindMemory(to: UInt8.self))
        small = copy
        region = nil
        count = copy.count
    }
}

/// An anonymous private mapping of whole pages, unmapped when the last reference goes away.
final class PageRegion: @unchecked Sendable {  // immutable fields; bytes below a view's count are never rewritten, and writes happen under the owning operation's state lock
    let base: UnsafeMutableRawPointer
    /// The mapping's length: whole pages, at least the capacity asked for.
    let capacity: Int

    /// Nil when the mapping fails (the caller falls back to malloc'd memory).
    init?(capacity: Int) {
        let page = max(4096, Int(sysconf(Int32(_SC_PAGESIZE))))
        let (rounded, overflow) = capacity.addingReportingOverflow(page - 1)
        guard capacity > 0, !overflow else { return nil }
        let length = rounded / page * page
        guard let mapped = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
              mapped != UnsafeMutableRawPointer(bitPattern: -1) else { return nil }
        base = mapped
        self.capacity = length
    }

    deinit { munmap(base, capacity) }
}
