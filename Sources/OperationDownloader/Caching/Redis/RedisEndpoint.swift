import Foundation

/// Where the Redis server is and how to log in: parsed from `redis://[user:password@]host:port[/db]`.
struct RedisEndpoint: Sendable, Equatable {
    static let defaultPort = 6379

    var host: String
    var port: Int
    var database: Int
    /// An ACL user (Redis 6+): `AUTH user password`; nil with a password: `AUTH password` (the default user).
    var username: String?
    var password: String?

    /// "redis://host:port/db", without credentials: for warnings and `HTTPImageCache.directory`.
    var redactedURL: URL {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return URL(string: "redis://\(shownHost):\(port)/\(database)") ?? URL(fileURLWithPath: "/")
    }

    var displayName: String { "\(host.contains(":") ? "[\(host)]" : host):\(port)" }

    /// Parses `url` (its query, if any, is read by `RedisCacheOptions.applying(queryOf:)`); `rediss` is refused
    /// (`RedisCacheError.tlsUnavailable`): the client has no TLS.
    init(url: URL) throws(RedisCacheError) {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false), let scheme = components.scheme?.lowercased()
        else { throw .invalidURL("\"\(url.absoluteString)\" has no scheme") }
        switch scheme {
        case "redis": break
        case "rediss": throw .tlsUnavailable
        default: throw .unsupportedScheme(scheme)
        }
        guard var host = components.host, !host.isEmpty else { throw .invalidURL("no host") }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let port = components.port ?? Self.defaultPort
        guard (1...65535).contains(port) else { throw .invalidURL("port \(port) is out of range") }
        var database = 0
        let path = components.path
        if !path.isEmpty, path != "/" {
            let digits = path.dropFirst()
            guard path.hasPrefix("/"), let number = Int(digits), number >= 0, String(number) == digits else {
                throw .invalidURL("the path must be a database number (/0, /1, ...), not \"\(path)\"")
            }
            database = number
        }
        self.host = host
        self.port = port
        self.database = database
        let user = components.user.flatMap { $0.isEmpty ? nil : $0 }
        let password = components.password
        if user != nil && password == nil {
            // redis://secret@host, as redis-cli and redis-py read it: the user-info is the password.
            self.username = nil
            self.password = user
        } else {
            self.username = user
            self.password = password
        }
    }
}
