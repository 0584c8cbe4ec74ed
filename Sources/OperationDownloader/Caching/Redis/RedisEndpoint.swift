import Foundation

/// A Redis node's address.
struct RedisNodeAddress: Sendable, Hashable, CustomStringConvertible {
    var host: String
    var port: Int

    /// "host:port" ("[::1]:6379" for IPv6).
    var description: String { "\(host.contains(":") ? "[\(host)]" : host):\(port)" }
}

/// One Redis node to connect to and how to log in there.
struct RedisEndpoint: Sendable, Equatable {
    static let defaultPort = 6379

    var host: String
    var port: Int
    var database: Int
    /// An ACL user (Redis 6+): `AUTH user password`; nil with a password: `AUTH password` (the default user).
    var username: String?
    var password: String?

    init(_ address: RedisNodeAddress, database: Int = 0, username: String? = nil, password: String? = nil) {
        host = address.host
        port = address.port
        self.database = database
        self.username = username
        self.password = password
    }

    /// Parses `redis://[user:password@]host:port[/db]` (Sentinel and Cluster URLs name several nodes:
    /// `RedisDeployment` reads those).
    init(url: URL) throws(RedisCacheError) {
        let deployment = try RedisDeployment(url: url)
        guard case .standalone(let address) = deployment.topology else {
            throw .invalidURL("a single node is needed here: redis://[user:password@]host:port[/db]")
        }
        self.init(address, database: deployment.database, username: deployment.username, password: deployment.password)
    }

    var address: RedisNodeAddress { RedisNodeAddress(host: host, port: port) }

    /// "host:port", without credentials: for warnings.
    var displayName: String { address.description }

    /// The same login on another node (a Sentinel's primary, a Cluster node).
    func at(_ address: RedisNodeAddress) -> RedisEndpoint {
        var endpoint = self
        endpoint.host = address.host
        endpoint.port = address.port
        return endpoint
    }
}
