import Foundation

/// The screen scale a URL or file name asks for: 2 for "@2x", 3 for "@3x", else 1.
///
/// Looks at the last path component without its query and fragment, so "icon@2x.png",
/// "icon@2x", "https://host/a/icon@3x.jpg?v=1" and "icon@2x~ipad.png" all count.
public func imageScaleFactor(forKey key: String) -> Double {
    var name = Substring(key)
    if let cut = name.firstIndex(where: { $0 == "?" || $0 == "#" }) { name = name[..<cut] }
    if let slash = name.lastIndex(of: "/") { name = name[name.index(after: slash)...] }
    if let dot = name.lastIndex(of: "."), dot != name.startIndex { name = name[..<dot] }
    if let tilde = name.firstIndex(of: "~") { name = name[..<tilde] }
    if name.hasSuffix("@2x") { return 2 }
    if name.hasSuffix("@3x") { return 3 }
    return 1
}
