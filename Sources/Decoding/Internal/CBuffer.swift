/// The text of a NUL-terminated C buffer that a C function filled in (an error message); invalid UTF-8
/// is repaired rather than trusted, and a buffer without a NUL is read to its end.
func stringFromCBuffer(_ buffer: [CChar]) -> String {
    String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
