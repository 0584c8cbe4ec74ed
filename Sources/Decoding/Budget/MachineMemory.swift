import Foundation

/// How much memory this process may use: the cgroup limit when there is one (containers), else the
/// physical memory.
enum MachineMemory {
    /// Where the cgroup limit is read: cgroup v2's `memory.max`, then cgroup v1's `memory.limit_in_bytes`.
    static let cgroupLimitFiles = ["/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"]

    static var available: Int {
        available(cgroupLimit: cgroupLimit(files: cgroupLimitFiles), physical: Int(clamping: ProcessInfo.processInfo.physicalMemory))
    }

    /// The smaller of the cgroup limit (when there is one) and the physical memory.
    static func available(cgroupLimit: Int?, physical: Int) -> Int {
        guard let limit = cgroupLimit, limit > 0 else { return physical }
        return min(limit, physical)
    }

    /// The limit in the first of `files` that can be read: "max" means none; cgroup v1 reports "no limit" as a
    /// huge number, which the physical memory caps anyway.
    static func cgroupLimit(files: [String]) -> Int? {
        for path in files {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { continue }
            let value = text.trimmingCharacters(in: .whitespacesAndNewlines)
            if value == "max" { return nil }
            if let bytes = Int(value) { return bytes }
        }
        return nil
    }
}
