import Foundation

/// A growable run of bytes with a movable front, over one `malloc`'d block: what a connection has received
/// and not yet read, or the commands it is about to send. Copies are `memcpy`s and nothing is zero-filled, so
/// the cost per byte is the same in a debug build (the tests') as in a release build.
final class RedisByteBuffer {
    private var base: UnsafeMutableRawPointer?
    private var capacity = 0
    private var start = 0
    private var end = 0

    deinit {
        free(base)
    }

    var count: Int { end - start }
    var isEmpty: Bool { end == start }

    /// The bytes held, valid until the buffer changes or is released (keep the buffer alive while using them).
    var bytes: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: base.map { UnsafeRawPointer($0 + start) }, count: count)
    }

    /// Set when memory for the bytes could not be had: what was to be appended is dropped, and the owner fails
    /// its call (`RedisConnection` checks).
    private(set) var allocationFailed = false

    func append(_ pointer: UnsafeRawPointer, count length: Int) {
        guard length > 0, reserveSpace(length), let base else { return }
        memcpy(base + end, pointer, length)
        end += length
    }

    func append(_ data: Data) {
        data.withUnsafeBytes { bytes in
            if let pointer = bytes.baseAddress { append(pointer, count: bytes.count) }
        }
    }

    func append(_ text: StaticString) {
        append(text.utf8Start, count: text.utf8CodeUnitCount)
    }

    /// `value` in decimal (no allocation).
    func appendDecimal(_ value: Int) {
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: Int.min has 20 characters
        let length = withUnsafeMutableBytes(of: &digits) { scratch -> Int in
            var magnitude = value.magnitude
            var index = scratch.count
            repeat {
                index -= 1
                scratch[index] = UInt8(48 + magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if value < 0 {
                index -= 1
                scratch[index] = UInt8(ascii: "-")
            }
            let length = scratch.count - index
            append(scratch.baseAddress! + index, count: length)
            return length
        }
        _ = length
    }

    /// Drops `length` bytes from the front.
    func consume(_ length: Int) {
        start += min(length, count)
        if start == end { start = 0; end = 0 }
    }

    /// Room for `length` more bytes at the end (moving the held bytes to the front, or growing); false when the
    /// memory could not be had (`allocationFailed` is then set).
    @discardableResult
    func reserveSpace(_ length: Int) -> Bool {
        if end + length <= capacity { return true }
        if start > 0, let base {
            if count > 0 { memmove(base, base + start, count) }
            end -= start
            start = 0
            if end + length <= capacity { return true }
        }
        let (needed, overflow) = end.addingReportingOverflow(length)
        var grown = max(capacity * 2, 4096)
        while !overflow, grown < needed, grown < Int.max / 2 { grown *= 2 }
        guard !overflow, grown >= needed, let moved = realloc(base, grown) else {
            allocationFailed = true
            return false
        }
        base = moved
        capacity = grown
        return true
    }

    /// The free space at the end (after a successful `reserveSpace`), to receive into; then `didWrite` the bytes
    /// written.
    var spareSpace: (pointer: UnsafeMutableRawPointer, count: Int)? {
        base.map { ($0 + end, capacity - end) }
    }

    func didWrite(_ length: Int) {
        end += length
    }

    /// Gives memory back after a large reply (a body), keeping a small block for the next ones.
    func shrinkIfLarge() {
        guard isEmpty, capacity > 1 << 20 else { return }
        free(base)
        base = nil
        capacity = 0
        start = 0
        end = 0
    }
}
