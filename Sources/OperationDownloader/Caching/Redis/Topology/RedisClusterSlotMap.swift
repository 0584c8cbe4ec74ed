import Foundation

/// Which node serves each of a Cluster's 16384 hash slots, read from `CLUSTER SLOTS` and patched by `MOVED`.
struct RedisClusterSlotMap: Sendable, Equatable {
    static let slotCount = 16384
    private static let unassigned = UInt16.max

    /// The node index of each slot (`unassigned` for none).
    private var owners: [UInt16]
    private(set) var nodes: [RedisNodeAddress]

    /// Reads a `CLUSTER SLOTS` reply, asked of `askedNode` (an empty host there means that node's); nil when it
    /// is not one (or assigns no slot).
    init?(clusterSlots reply: RedisReply, askedNode: RedisNodeAddress) {
        guard let ranges = reply.elements else { return nil }
        owners = Array(repeating: Self.unassigned, count: Self.slotCount)
        nodes = []
        for range in ranges {
            guard let parts = range.elements, parts.count >= 3,
                  case .integer(let first) = parts[0], case .integer(let last) = parts[1],
                  first >= 0, first <= last, last < Self.slotCount,
                  let primary = parts[2].elements, primary.count >= 2,
                  let host = primary[0].text, case .integer(let port) = primary[1], (1...65535).contains(port) else { return nil }
            let address = RedisNodeAddress(host: host.isEmpty || host == "?" ? askedNode.host : host, port: port)
            let index = nodes.firstIndex(of: address) ?? {
                nodes.append(address)
                return nodes.count - 1
            }()
            guard index < Int(Self.unassigned) else { return nil }
            for slot in first...last { owners[slot] = UInt16(index) }
        }
        guard !nodes.isEmpty else { return nil }
    }

    func node(for slot: Int) -> RedisNodeAddress? {
        let owner = owners[slot]
        return owner == Self.unassigned ? nil : nodes[Int(owner)]
    }

    /// `MOVED slot address`: the slot is served there from now on.
    mutating func assign(_ slot: Int, to address: RedisNodeAddress) {
        let index = nodes.firstIndex(of: address) ?? {
            nodes.append(address)
            return nodes.count - 1
        }()
        guard index < Int(Self.unassigned) else { return }
        owners[slot] = UInt16(index)
    }

    /// The nodes that serve at least one slot.
    var primaries: [RedisNodeAddress] {
        var serving = Set<UInt16>()
        for owner in owners where owner != Self.unassigned { serving.insert(owner) }
        return serving.sorted().map { nodes[Int($0)] }
    }

    // MARK: Hash slots

    /// The slot of `key`: CRC16 (XMODEM) of the key, or of its hash tag — the text between the first `{` and the
    /// next `}`, when not empty — modulo 16384 (the Cluster specification's HASH_SLOT).
    static func slot(of key: Data) -> Int {
        key.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> Int in
            let all = bytes.bindMemory(to: UInt8.self)
            var part = all[...]
            if let open = all.firstIndex(of: UInt8(ascii: "{")),
               let close = all[(open + 1)...].firstIndex(of: UInt8(ascii: "}")), close > open + 1 {
                part = all[(open + 1)..<close]
            }
            return Int(crc16(part) & 0x3FFF)
        }
    }

    static func crc16(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> UInt16 {
        var crc: UInt16 = 0
        for byte in bytes {
            crc = (crc << 8) ^ crcTable[Int(((crc >> 8) ^ UInt16(byte)) & 0xFF)]
        }
        return crc
    }

    private static let crcTable: [UInt16] = (0..<256).map { value in
        var crc = UInt16(value) << 8
        for _ in 0..<8 { crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1 }
        return crc
    }
}

/// A Cluster's redirection of one command: `MOVED` (the slot lives elsewhere now) or `ASK` (this key is being
/// migrated: ask that node once, after `ASKING`).
enum RedisRedirection: Equatable {
    case moved(slot: Int, to: RedisNodeAddress)
    case ask(slot: Int, to: RedisNodeAddress)

    /// Reads an error reply such as "MOVED 3999 127.0.0.1:6381" sent by `node` (whose host stands in for an
    /// empty one); nil for any other reply.
    init?(_ reply: RedisReply, from node: RedisNodeAddress) {
        guard let code = reply.errorCode, code == "MOVED" || code == "ASK", let message = reply.errorMessage else { return nil }
        let parts = message.split(separator: " ")
        guard parts.count == 3, let slot = Int(parts[1]), (0..<RedisClusterSlotMap.slotCount).contains(slot),
              let colon = parts[2].lastIndex(of: ":"), let port = Int(parts[2][parts[2].index(after: colon)...]),
              (1...65535).contains(port) else { return nil }
        var host = String(parts[2][..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let address = RedisNodeAddress(host: host.isEmpty || host == "?" ? node.host : host, port: port)
        self = code == "MOVED" ? .moved(slot: slot, to: address) : .ask(slot: slot, to: address)
    }
}
