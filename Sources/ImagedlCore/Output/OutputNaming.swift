import Foundation

/// File names for `--output` and `--rgba`: safe characters only, never colliding within one run.
enum OutputNaming {
    /// A file name for what `url` served: its last path component, or its host when the path is empty.
    static func baseName(for url: URL) -> String {
        let last = url.lastPathComponent
        let candidate = (last.isEmpty || last == "/") ? (url.host ?? "download") : last
        return sanitized(candidate)
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
        let clean = sanitized(base)
        let stem: String
        if let dot = clean.lastIndex(of: "."), dot != clean.startIndex {
            stem = String(clean[..<dot])
        } else {
            stem = clean
        }
        var name = "\(stem).\(ext)"
        var n = 2
        while used.contains(name) {
            name = "\(stem)-\(n).\(ext)"
            n += 1
        }
        used.insert(name)
        return name
    }
}
