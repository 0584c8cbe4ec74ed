/// The variable-length LZW decoder of GIF image data, resumable across data sub-blocks and network chunks.
///
/// Codes are 3...12 bits wide (minimum code size 1...11 plus one). The table holds the full 4096 entries;
/// once full, codes stay 12 bits wide and no entry is added until the encoder sends a clear code
/// ("deferred clear", which browsers accept). An out-of-range code ends the frame's pixels, as browsers do,
/// and anything after the end code is ignored. Every loop is bounded by the input or by the 4096-entry table.
final class GIFLZWDecoder {
    static let maxCodes = 4096

    private let minCodeSize: Int
    private let clearCode: Int
    private let endCode: Int
    private var codeSize: Int
    private var nextCode: Int
    private var previousCode = -1
    private var bitBuffer: UInt64 = 0
    private var bitCount = 0
    /// True after the end code, an invalid code or a full frame: later bytes are ignored.
    private(set) var isFinished = false
    /// True when an invalid code stopped decoding.
    private(set) var sawInvalidCode = false

    // Table entries: prefix code, last byte, first byte and string length of each code; owned by this
    // decoder (allocated in init, freed in deinit) so the hot loop runs on plain pointers.
    private let prefix = UnsafeMutableBufferPointer<UInt16>.allocate(capacity: maxCodes)
    private let suffix = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: maxCodes)
    private let firstByte = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: maxCodes)
    private let length = UnsafeMutableBufferPointer<UInt16>.allocate(capacity: maxCodes)
    private let stack = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: maxCodes)

    /// `minCodeSize` must be 1...11 (the caller rejects other values as corrupt).
    init(minCodeSize: Int) {
        self.minCodeSize = minCodeSize
        clearCode = 1 << minCodeSize
        endCode = clearCode + 1
        codeSize = minCodeSize + 1
        nextCode = clearCode + 2
        prefix.initialize(repeating: 0)
        suffix.initialize(repeating: 0)
        firstByte.initialize(repeating: 0)
        length.initialize(repeating: 1)
        stack.initialize(repeating: 0)
        for i in 0..<clearCode {
            suffix[i] = UInt8(truncatingIfNeeded: i)
            firstByte[i] = UInt8(truncatingIfNeeded: i)
        }
    }

    deinit {
        prefix.deallocate()
        suffix.deallocate()
        firstByte.deallocate()
        length.deallocate()
        stack.deallocate()
    }

    /// Decodes `bytes` (the payload of one or more sub-blocks) into `writer`.
    func decode(_ bytes: UnsafeBufferPointer<UInt8>, into writer: inout GIFFrameWriter) {
        guard !isFinished else { return }
        var index = 0
        let count = bytes.count
        while true {
            // Refill: at most 7 bytes at a time keeps the 64-bit buffer from overflowing.
            while bitCount <= 56, index < count {
                bitBuffer |= UInt64(bytes[index]) << UInt64(bitCount)
                bitCount += 8
                index += 1
            }
            guard bitCount >= codeSize else { return }
            let code = Int(bitBuffer & ((1 << UInt64(codeSize)) - 1))
            bitBuffer >>= UInt64(codeSize)
            bitCount -= codeSize

            if code == clearCode {
                codeSize = minCodeSize + 1
                nextCode = clearCode + 2
                previousCode = -1
                continue
            }
            if code == endCode {
                isFinished = true
                return
            }
            let emitCode: Int
            let newFirst: UInt8
            if previousCode < 0 {
                guard code < clearCode else { return stop() }
                emitCode = code
                newFirst = firstByte[code]
            } else if code < nextCode {
                emitCode = code
                newFirst = firstByte[code]
            } else if code == nextCode && nextCode < Self.maxCodes {
                // The KwKwK case: the previous string plus its own first byte.
                emitCode = -1
                newFirst = firstByte[previousCode]
            } else {
                return stop()
            }

            // Add the new entry (previous string + first byte of the current one) while the table has room.
            if previousCode >= 0 && nextCode < Self.maxCodes {
                prefix[nextCode] = UInt16(previousCode)
                suffix[nextCode] = newFirst
                firstByte[nextCode] = firstByte[previousCode]
                length[nextCode] = length[previousCode] &+ 1
                nextCode += 1
                if nextCode == (1 << codeSize) && codeSize < 12 { codeSize += 1 }
            }
            let outCode = emitCode >= 0 ? emitCode : nextCode - 1
            // Walk the chain backwards into the end of the stack, then hand the string over in one piece.
            let n = Int(length[outCode])
            var c = outCode
            var p = stack.count
            var steps = 0
            while steps < n && p > 0 {
                p -= 1
                stack[p] = suffix[c]
                c = Int(prefix[c])
                steps += 1
            }
            previousCode = outCode
            if !writer.write(UnsafeBufferPointer(rebasing: stack[p..<stack.count])) {
                isFinished = true
                return
            }
        }
    }

    private func stop() {
        sawInvalidCode = true
        isFinished = true
    }
}
