// libFuzzer entry point for the Redis client's RESP reader. Built by Fuzz/run.sh with `-sanitize=fuzzer,address`
// from Sources/OperationDownloader/Caching/Redis/Client/RESPReader.swift and RedisReply.swift (Foundation only)
// and the harness Tests/OperationDownloaderTests/Caching/Redis/Support/RESPFuzzHarness.swift, shared with
// RESPFuzzRegressionTests. One target: `resp` (whatever a server might send).
//
// A crash, an ASan report, a Swift trap (overflow, bounds, a broken invariant) or a hang is a finding.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    guard let start, count > 0 else { return 0 }
    let broken = respFuzzOne(Data(UnsafeRawBufferPointer(start: start, count: count)))
    // A broken invariant must stop the run for libFuzzer to keep the input: that is what a trap is for here.
    if !broken.isEmpty { preconditionFailure(broken.joined(separator: "; ")) }
    return 0
}
