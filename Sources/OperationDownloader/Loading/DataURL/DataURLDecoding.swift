/// The byte-level decoders behind `DataURL`: percent escapes, then base64. Streaming (a byte at a time, the
/// output handed to a closure), so a payload is never copied whole.

/// `%XX` escapes to bytes; a `%` not followed by two hex digits stays as it is (the WHATWG percent-decode).
struct PercentDecoder {
    private enum State {
        case idle
        case percent
        case percentDigit(UInt8)
    }

    private var state = State.idle

    @inline(__always)
    mutating func feed(_ byte: UInt8, _ emit: (UInt8) -> Void) {
        switch state {
        case .idle:
            break
        case .percent:
            if Self.hexValue(byte) != nil {
                state = .percentDigit(byte)
                return
            }
            emit(UInt8(ascii: "%"))
        case .percentDigit(let first):
            if let low = Self.hexValue(byte), let high = Self.hexValue(first) {
                state = .idle
                emit(high << 4 | low)
                return
            }
            emit(UInt8(ascii: "%"))
            emit(first)
        }
        state = .idle
        if byte == UInt8(ascii: "%") {
            state = .percent
        } else {
            emit(byte)
        }
    }

    /// The bytes of an escape left unfinished at the end.
    mutating func finish(_ emit: (UInt8) -> Void) {
        switch state {
        case .idle: break
        case .percent: emit(UInt8(ascii: "%"))
        case .percentDigit(let first):
            emit(UInt8(ascii: "%"))
            emit(first)
        }
        state = .idle
    }

    @inline(__always)
    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}

/// The WHATWG "forgiving base64" rules: ASCII whitespace is ignored, `=` padding is optional but only at the
/// end (at most two, and then the length is a multiple of 4), a length of 4n + 1 is invalid.
enum ForgivingBase64 {
    /// The 6-bit value of a base64 alphabet byte; nil for any other byte.
    @inline(__always)
    static func sextet(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return byte - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return byte - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"): return 62
        case UInt8(ascii: "/"): return 63
        default: return nil
        }
    }

    @inline(__always)
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0C || byte == 0x0D
    }

    /// Checks the text and counts what it decodes to, without decoding it.
    struct Counter {
        /// Alphabet characters seen (whitespace and padding not counted).
        private(set) var characters = 0
        private var padding = 0

        /// nil when `byte` may come next, else what is wrong with it.
        @inline(__always)
        mutating func feed(_ byte: UInt8) -> String? {
            if isWhitespace(byte) { return nil }
            if byte == UInt8(ascii: "=") {
                padding += 1
                return padding > 2 ? "more than two '=' at the end" : nil
            }
            guard sextet(byte) != nil else {
                let shown = byte >= 0x21 && byte < 0x7F ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(String(byte, radix: 16))"
                return "\(shown) is not a base64 character"
            }
            if padding > 0 { return "data after '='" }
            characters += 1
            return nil
        }

        /// The decoded length, or nil when the length cannot be base64.
        var decodedCount: Int? {
            if padding > 0 && (characters + padding) % 4 != 0 { return nil }
            switch characters % 4 {
            case 0: return characters / 4 * 3
            case 2: return characters / 4 * 3 + 1
            case 3: return characters / 4 * 3 + 2
            default: return nil
            }
        }
    }

    /// Decodes text a `Counter` accepted.
    struct Decoder {
        private var bits: UInt32 = 0
        private var count = 0

        @inline(__always)
        mutating func feed(_ byte: UInt8, _ emit: (UInt8) -> Void) {
            guard let value = sextet(byte) else { return }  // whitespace and padding
            bits = bits << 6 | UInt32(value)
            count += 1
            if count == 4 {
                emit(UInt8(truncatingIfNeeded: bits >> 16))
                emit(UInt8(truncatingIfNeeded: bits >> 8))
                emit(UInt8(truncatingIfNeeded: bits))
                bits = 0
                count = 0
            }
        }

        /// The last one or two bytes of unpadded (or padded) text; extra low bits are dropped.
        mutating func finish(_ emit: (UInt8) -> Void) {
            switch count {
            case 2:
                emit(UInt8(truncatingIfNeeded: bits >> 4))
            case 3:
                emit(UInt8(truncatingIfNeeded: bits >> 10))
                emit(UInt8(truncatingIfNeeded: bits >> 2))
            default:
                break
            }
            bits = 0
            count = 0
        }
    }
}
