import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Response or request header fields with case-insensitive lookup, keeping the original spelling
/// (and order) for the `HTTPURLResponse` rebuilt from a cache entry.
struct HTTPHeaderFields: Sendable, Equatable {
    private(set) var fields: [(name: String, value: String)]

    init(_ fields: [(name: String, value: String)] = []) {
        self.fields = fields
    }

    /// The fields of `response`, sorted by name so that the same response always encodes the same way.
    init(_ response: HTTPURLResponse) {
        var pairs: [(name: String, value: String)] = []
        for (key, value) in response.allHeaderFields {
            guard let name = key as? String else { continue }
            pairs.append((name, value as? String ?? "\(value)"))
        }
        pairs.sort { $0.name.lowercased() < $1.name.lowercased() }
        self.init(pairs)
    }

    /// The header fields of `request`.
    init(request: URLRequest) {
        let pairs = (request.allHTTPHeaderFields ?? [:]).map { (name: $0.key, value: $0.value) }
        self.init(pairs.sorted { $0.name.lowercased() < $1.name.lowercased() })
    }

    /// The value of `name` (any case), or nil.
    subscript(name: String) -> String? {
        let lower = name.lowercased()
        return fields.first { $0.name.lowercased() == lower }?.value
    }

    /// Replaces (or adds) `name`; nil removes it.
    mutating func set(_ name: String, _ value: String?) {
        let lower = name.lowercased()
        fields.removeAll { $0.name.lowercased() == lower }
        if let value { fields.append((name, value)) }
    }

    /// A dictionary for `HTTPURLResponse(url:statusCode:httpVersion:headerFields:)`.
    var dictionary: [String: String] {
        var result: [String: String] = [:]
        for field in fields { result[field.name] = field.value }
        return result
    }

    static func == (lhs: HTTPHeaderFields, rhs: HTTPHeaderFields) -> Bool {
        lhs.fields.count == rhs.fields.count
            && zip(lhs.fields, rhs.fields).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }
}
