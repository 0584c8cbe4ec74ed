import Foundation

extension ICCProfile {
    /// The profile's name from its `desc` tag (v2 textDescriptionType, or v4 multiLocalizedUnicodeType with
    /// en-US preferred, else the first record), at most 127 characters; "" when it has none.
    var name: String {
        guard let tag = tag(.init("desc")) else { return "" }
        let text: String
        switch tag.typeSignature {
        case Signature("desc"):
            guard let count = tag.uint32(at: 8).map(Int.init), let ascii = tag.slice(12, min(count, max(0, tag.count - 12))) else { return "" }
            text = String(decoding: ascii.prefix { $0 != 0 }.map { $0 < 128 ? $0 : 63 }, as: UTF8.self)
        case Signature("mluc"):
            text = Self.multiLocalized(tag) ?? ""
        default:
            return ""
        }
        return String(text.trimmingCharacters(in: .whitespacesAndNewlines).prefix(127))
    }

    private static func multiLocalized(_ tag: ICCByteReader) -> String? {
        guard let records = tag.uint32(at: 8).map(Int.init), let recordSize = tag.uint32(at: 12).map(Int.init),
              records > 0, recordSize >= 12, records <= 1024 else { return nil }
        var chosen: (length: Int, offset: Int)?
        for index in 0..<records {
            let at = 16 + index * recordSize
            guard let language = tag.uint32(at: at), let length = tag.uint32(at: at + 4), let offset = tag.uint32(at: at + 8) else { break }
            if chosen == nil || language == 0x656E_5553 { chosen = (Int(length), Int(offset)) }  // "enUS"
            if language == 0x656E_5553 { break }
        }
        guard let chosen, let units = tag.slice(chosen.offset, min(chosen.length, 512) & ~1) else { return nil }
        let utf16 = stride(from: units.startIndex, to: units.endIndex, by: 2).map { UInt16(units[$0]) << 8 | UInt16(units[$0 + 1]) }
        return String(decoding: utf16.prefix { $0 != 0 }, as: UTF16.self)
    }
}
