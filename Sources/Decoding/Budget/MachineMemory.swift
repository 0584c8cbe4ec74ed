import Foundation

/// How much memory this process may use: the cgroup limit when there is one (containers), else the
/// physical memory.
enum MachineMemory {
    static var available: Int {
        let physical = Int(clamping: ProcessInfo.processInfo.physicalMemory)
        guard let limit = cgroupLimit, limit > 0 else { return physical }
        return min(limit, physical)
    }

    /// cgroup v2 `memory.max` ("max" means none), else cgroup v1 `memory.limit_in_bytes`.
    static var cgroupLimit: Int? {
        for path in ["/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"] {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { continue }
            let value = text.trimmingCharacters(in: .whitespacesAndNewlines)
            if value == "max" { return nil }
            // cgroup v1 reports "no limit" as a huge number, which the physical memory caps anyway.
            if let bytes = Int(value) { return bytes }
        }
        return nil
    }
}
