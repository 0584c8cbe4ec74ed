import Foundation
import Testing
@testable import OperationDownloader

/// Cluster routing without a server: hash slots (the specification's vectors), hash tags, `CLUSTER SLOTS` and
/// redirections.
@Suite struct RedisClusterSlotTests {
    func slot(_ key: String) -> Int { RedisClusterSlotMap.slot(of: Data(key.utf8)) }

    @Test func hashSlotsAsTheClusterSpecificationDefinesThem() {
        // CRC16/XMODEM's check value, and slots redis-cli's CLUSTER KEYSLOT gives.
        let check = Data("123456789".utf8).withUnsafeBytes { RedisClusterSlotMap.crc16($0.bindMemory(to: UInt8.self)[...]) }
        #expect(check == 0x31C3)
        #expect(slot("foo") == 12182)
        #expect(slot("bar") == 5061)
        // Hash tags: the first {…} that is not empty decides.
        #expect(slot("{user1000}.following") == slot("{user1000}.followers"))
        #expect(slot("{user1000}.following") == slot("user1000"))
        #expect(slot("foo{}{bar}") == slot("foo{}{bar}") && slot("foo{}{bar}") != slot("bar"))
        #expect(slot("foo{{bar}}zap") == slot("{bar"))
        #expect(slot("foo{bar}{zap}") == slot("bar"))
    }

    @Test func readsClusterSlotsAndAppliesMoved() throws {
        let node = { (host: String, port: Int) -> RedisReply in .array([.string(Data(host.utf8)), .integer(port), .string(Data("id".utf8))]) }
        let reply = RedisReply.array([
            .array([.integer(0), .integer(5460), node("127.0.0.1", 7000), node("127.0.0.1", 7003)]),
            .array([.integer(5461), .integer(10922), node("", 7001)]),
            .array([.integer(10923), .integer(16383), node("127.0.0.1", 7002)]),
        ])
        let asked = RedisNodeAddress(host: "10.1.1.1", port: 7001)
        var map = try #require(RedisClusterSlotMap(clusterSlots: reply, askedNode: asked))
        #expect(map.node(for: 0) == RedisNodeAddress(host: "127.0.0.1", port: 7000))
        // An empty host is the asked node's.
        #expect(map.node(for: 6000) == RedisNodeAddress(host: "10.1.1.1", port: 7001))
        #expect(map.primaries.count == 3)
        map.assign(16383, to: RedisNodeAddress(host: "127.0.0.1", port: 7009))
        #expect(map.node(for: 16383)?.port == 7009 && map.node(for: 16382)?.port == 7002)
        // Not a slot map: nil.
        #expect(RedisClusterSlotMap(clusterSlots: .error("ERR This instance has cluster support disabled"), askedNode: asked) == nil)
        #expect(RedisClusterSlotMap(clusterSlots: .array([.array([.integer(5), .integer(2), node("h", 1)])]), askedNode: asked) == nil)
        #expect(RedisClusterSlotMap(clusterSlots: .array([.array([.integer(0), .integer(16384), node("h", 1)])]), askedNode: asked) == nil)
    }

    @Test func readsRedirections() {
        let from = RedisNodeAddress(host: "10.0.0.1", port: 7000)
        #expect(RedisRedirection(.error("MOVED 3999 127.0.0.1:6381"), from: from) == .moved(slot: 3999, to: RedisNodeAddress(host: "127.0.0.1", port: 6381)))
        #expect(RedisRedirection(.error("ASK 3999 [::1]:6381"), from: from) == .ask(slot: 3999, to: RedisNodeAddress(host: "::1", port: 6381)))
        // An empty host (cluster-preferred-endpoint-type unknown-endpoint) is the sender's.
        #expect(RedisRedirection(.error("MOVED 1 :7005"), from: from) == .moved(slot: 1, to: RedisNodeAddress(host: "10.0.0.1", port: 7005)))
        #expect(RedisRedirection(.error("MOVED 16384 h:1"), from: from) == nil)
        #expect(RedisRedirection(.error("ERR unknown"), from: from) == nil)
        #expect(RedisRedirection(.status("OK"), from: from) == nil)
    }
}
