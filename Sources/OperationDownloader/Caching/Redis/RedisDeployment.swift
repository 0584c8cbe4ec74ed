import Foundation

/// Where a Redis cache lives, and how to log in, parsed from its URL:
///
/// - `redis://[user:password@]host[:port][/db]`: one server (port 6379 by default).
/// - `redis-sentinel://[user:password@]host[:port][,host[:port]…]/mastername[/db]`: the Sentinels (port 26379 by
///   default) that name the primary of `mastername`.
/// - `redis-cluster://[user:password@]host[:port][,host[:port]…]`: some nodes of a Cluster (database 0 only).
///
/// The same credentials log in to every node, and to the Sentinels (a Sentinel without a password is accepted).
/// Foundation's `URL` cannot hold several `host:port` pairs; `HTTPImageCache(redis:)` also takes the string, and
/// a `URL` may carry the host list percent-encoded (`url` makes one).
struct RedisDeployment: Sendable, Equatable {
    enum Topology: Sendable, Equatable {
        case standalone(RedisNodeAddress)
        case sentinel(sentinels: [RedisNodeAddress], primaryName: String)
        case cluster(seeds: [RedisNodeAddress])
    }

    static let sentinelPort = 26379
    /// More nodes than this in one URL are refused (each is tried in turn within the connect timeout).
    static let maximumNodes = 32

    var topology: Topology
    var database: Int
    var username: String?
    var password: String?
    /// The URL's query (options: `RedisCacheOptions.applying(query:)`), without the `?`.
    var query: String?

    init(url: URL) throws(RedisCacheError) {
        try self.init(string: url.absoluteString)
    }

    init(string: String) throws(RedisCacheError) {
        guard let schemeEnd = string.range(of: "://") else { throw .invalidURL("\"\(Self.redacted(string))\" has no scheme") }
        let scheme = string[..<schemeEnd.lowerBound].lowercased()
        switch scheme {
        case "redis", "redis-sentinel", "redis-cluster": break
        case "rediss", "rediss-sentinel", "rediss-cluster": throw .tlsUnavailable
        default: throw .unsupportedScheme(scheme)
        }
        var rest = string[schemeEnd.upperBound...]
        guard !rest.contains("#") else { throw .invalidURL("a fragment (#) has no meaning here") }
        var query: String?
        if let mark = rest.firstIndex(of: "?") {
            query = String(rest[rest.index(after: mark)...])
            rest = rest[..<mark]
        }
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        var authority = rest[..<slash]
        let path = rest[slash...]
        var credentials: (username: String?, password: String?) = (nil, nil)
        if let at = authority.lastIndex(of: "@") {
            credentials = try Self.credentials(authority[..<at])
            authority = authority[authority.index(after: at)...]
        }
        guard let hostList = String(authority).removingPercentEncoding, !hostList.isEmpty else { throw .invalidURL("no host") }
        let defaultPort = scheme == "redis-sentinel" ? Self.sentinelPort : RedisEndpoint.defaultPort
        var nodes: [RedisNodeAddress] = []
        for part in hostList.split(separator: ",", omittingEmptySubsequences: false) {
            nodes.append(try Self.node(part, defaultPort: defaultPort))
        }
        guard nodes.count <= Self.maximumNodes else { throw .invalidURL("more than \(Self.maximumNodes) hosts") }
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        switch scheme {
        case "redis":
            guard nodes.count == 1 else { throw .invalidURL("redis:// names one host; use redis-sentinel:// or redis-cluster:// for several") }
            guard segments.count <= 1 else { throw .invalidURL("the path must be a database number (/0, /1, ...), not \"\(path)\"") }
            database = try Self.database(segments.first ?? "")
            topology = .standalone(nodes[0])
        case "redis-sentinel":
            guard let name = segments.first.flatMap({ String($0).removingPercentEncoding }), !name.isEmpty, segments.count <= 2 else {
                throw .invalidURL("a Sentinel URL names its primary: redis-sentinel://host:port[,host:port…]/mastername[/db]")
            }
            database = try Self.database(segments.count == 2 ? segments[segments.startIndex + 1] : "")
            topology = .sentinel(sentinels: nodes, primaryName: name)
        default:
            guard segments.allSatisfy(\.isEmpty), segments.count <= 1 else {
                throw .invalidURL("a Cluster has only database 0: redis-cluster://host:port[,host:port…] with no path")
            }
            database = 0
            topology = .cluster(seeds: nodes)
        }
        username = credentials.username
        password = credentials.password
        self.query = query
    }

    /// The nodes the URL names (the server, the Sentinels, or the Cluster's seed nodes).
    var nodes: [RedisNodeAddress] {
        switch topology {
        case .standalone(let node): return [node]
        case .sentinel(let sentinels, _): return sentinels
        case .cluster(let seeds): return seeds
        }
    }

    /// The login on `address`.
    func endpoint(_ address: RedisNodeAddress) -> RedisEndpoint {
        RedisEndpoint(address, database: database, username: username, password: password)
    }

    /// For warnings: the nodes without credentials ("127.0.0.1:6379", "Sentinel primary mymaster (h1:26379,h2:26379)").
    var displayName: String {
        switch topology {
        case .standalone(let node): return node.description
        case .sentinel(let sentinels, let name): return "Sentinel primary \(name) (\(sentinels.map(\.description).joined(separator: ",")))"
        case .cluster(let seeds): return "Cluster \(seeds.map(\.description).joined(separator: ","))"
        }
    }

    /// A `URL` that `init(url:)` reads back to this deployment (several hosts percent-encoded), or nil.
    func url(withCredentials: Bool) -> URL? {
        var text: String
        let hosts = nodes.map(\.description).joined(separator: ",")
        let allowed = CharacterSet.urlHostAllowed.subtracting(CharacterSet(charactersIn: ":,[]"))
        let host = nodes.count == 1 ? hosts : (hosts.addingPercentEncoding(withAllowedCharacters: allowed) ?? hosts)
        switch topology {
        case .standalone: text = "redis://"
        case .sentinel: text = "redis-sentinel://"
        case .cluster: text = "redis-cluster://"
        }
        if withCredentials, let password {
            let userAllowed = CharacterSet.urlUserAllowed.subtracting(CharacterSet(charactersIn: ":@"))
            let user = (username ?? "").addingPercentEncoding(withAllowedCharacters: userAllowed) ?? ""
            text += "\(user):\(password.addingPercentEncoding(withAllowedCharacters: userAllowed) ?? "")@"
        }
        text += host
        switch topology {
        case .standalone: text += "/\(database)"
        case .sentinel(_, let name): text += "/\(name.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/"))) ?? name)/\(database)"
        case .cluster: break
        }
        if withCredentials, let query { text += "?" + query }
        return URL(string: text)
    }

    // MARK: Parsing

    /// The user and password of `user:password` (`secret` alone: the password, as redis-cli and redis-py read it).
    private static func credentials(_ userInfo: Substring) throws(RedisCacheError) -> (username: String?, password: String?) {
        let parts = userInfo.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard let user = String(parts[0]).removingPercentEncoding,
              let password = parts.count > 1 ? String(parts[1]).removingPercentEncoding : "" else {
            throw .invalidURL("the credentials are not percent-encoded correctly")
        }
        if parts.count == 1 { return (nil, user.isEmpty ? nil : user) }
        return (user.isEmpty ? nil : user, password)
    }

    /// `host`, `host:port`, `[v6]` or `[v6]:port`.
    private static func node(_ text: Substring, defaultPort: Int) throws(RedisCacheError) -> RedisNodeAddress {
        var host: Substring
        var portText: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw .invalidURL("an IPv6 address without its ]") }
            host = text[text.index(after: text.startIndex)..<close]
            let after = text[text.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw .invalidURL("\"\(text)\" is not host:port") }
                portText = after.dropFirst()
            }
        } else if let colon = text.firstIndex(of: ":") {
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        } else {
            host = text
        }
        guard !host.isEmpty, host.allSatisfy({ $0.isASCII && !$0.isWhitespace && !"/@?#,[]".contains($0) } ) || text.hasPrefix("[") else {
            throw .invalidURL(host.isEmpty ? "no host" : "\"\(host)\" is not a host name")
        }
        var port = defaultPort
        if let portText {
            guard let number = Int(portText), portText.allSatisfy(\.isASCII), (1...65535).contains(number) else {
                throw .invalidURL("port \"\(portText)\" is out of range")
            }
            port = number
        }
        return RedisNodeAddress(host: String(host), port: port)
    }

    private static func database(_ text: Substring) throws(RedisCacheError) -> Int {
        guard !text.isEmpty else { return 0 }
        guard let number = Int(text), number >= 0, number <= Int(Int32.max), String(number) == text else {
            throw .invalidURL("the path must be a database number (/0, /1, ...), not \"/\(text)\"")
        }
        return number
    }

    /// `string` with anything between "://" and "@" hidden (for an error message).
    private static func redacted(_ string: String) -> String {
        guard let at = string.lastIndex(of: "@") else { return string }
        return "…" + string[at...]
    }
}
