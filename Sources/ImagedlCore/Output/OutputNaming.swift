import Foundation

/// File names for `--output` and `--rgba`: safe characters only, never colliding within one run.
enum OutputNaming {
    /// A file name for what `url` served: its last path component, or its host when the path is empty.
    static func baseName(for url: URL) -> String {
        let last = url.lastPathComponent
        let candidate = (last.isEmpty || last == "/") ? (url.host ?? "download") : last
        return sanitized(candidate)
    }

    /// The name stem of a download's file: the last path component without its extension, or the whole host
    /// name ("example.com") when the path is empty.
    static func stem(for url: URL) -> String {
        let last = url.lastPathComponent
        guard last.isEmpty || last == "/" else { return stem(of: last) }
        return sanitized(url.host ?? "download")
    }

    /// Keeps letters, digits, ".", "-" and "_" ; anything else becomes "_"; never empty, never hidden.
    static func sanitized(_ name: String) -> String {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_")
        var cleaned = String(name.prefix(100).map { allowed.contains($0) ? $0 : "_" })
        while cleaned.hasPrefix(".") { cleaned.removeFirst() }
        return cleaned.isEmpty ? "download" : cleaned
    }

    /// `base` with its extension replaced by `ext` (kept when already equal), made unique against `used`
    /// by adding "-2", "-3", ….
    static func uniqueName(base: String, extension ext: String, used: inout Set<String>) -> String {
        let stem = self.stem(of: base)
        var n = 1
        while used.contains(fileName(stem: stem, extension: ext, number: n)) { n += 1 }
        let name = fileName(stem: stem, extension: ext, number: n)
        used.insert(name)
        return name
    }

    /// `base` sanitized, without its extension (the part after the last dot, unless the dot comes first).
    static func stem(of base: String) -> String {
        let clean = sanitized(base)
        guard let dot = clean.lastIndex(of: "."), dot != clean.startIndex else { return clean }
        return String(clean[..<dot])
    }

    /// "stem.ext" for the first of a name, "stem-2.ext", "stem-3.ext", … after it.
    static func fileName(stem: String, extension ext: String, number: Int) -> String {
        number <= 1 ? "\(stem).\(ext)" : "\(stem)-\(number).\(ext)"
    }
}
