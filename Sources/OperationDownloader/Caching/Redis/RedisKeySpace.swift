import Foundation

/// The Redis keys of one cache: `<prefix>:v2:{<SHA-256 hex>}` for an entry (the entry file name without its
/// extension: the hash of the cache key, or of a Vary variant), `<prefix>:v2:{<hex>}:lock` for the
/// single-flight lock of a cache key. The hash in braces is a Cluster hash tag: an entry and its lock live in one
/// slot, on one node, whatever the deployment. `v2` is the key layout's version (v1, before Cluster support,
/// had no hash tags): a future layout uses new keys.
struct RedisKeySpace: Sendable, Equatable {
    let prefix: String

    var namespace: String { prefix + ":v2:" }

    func entryKey(_ entryName: String) -> Data {
        Data((namespace + "{" + Self.hash(of: entryName) + "}").utf8)
    }

    func lockKey(_ entryName: String) -> Data {
        Data((namespace + "{" + Self.hash(of: entryName) + "}:lock").utf8)
    }

    /// A SCAN pattern matching every key of this cache (glob characters of the prefix escaped).
    var scanPattern: Data {
        var escaped = ""
        for character in namespace {
            if "*?[]\\".contains(character) { escaped.append("\\") }
            escaped.append(character)
        }
        return Data((escaped + "*").utf8)
    }

    private static func hash(of entryName: String) -> Substring {
        let suffix = HTTPCacheDirectory.entryExtension
        return entryName.hasSuffix(suffix) ? entryName.dropLast(suffix.count) : Substring(entryName)
    }
}
