// libFuzzer entry point for the HTTP cache's header parsers. Built by Fuzz/run.sh with `-sanitize=fuzzer,address`
// from the parser sources of Sources/OperationDownloader/Caching/HTTPCache (Foundation only) and the harness
// Tests/OperationDownloaderTests/Support/HeaderFuzzHarness.swift, shared with HeaderFuzzRegressionTests. One
// target per run, chosen with FUZZ_TARGET:
//
//   cache-control  http-date  age  vary  etag  content-type   that parser (and its invariants)
//   range                                                     Range, Content-Range and If-Range
//   headers                                                   a header block through the freshness and storage rules
//
// A crash, an ASan report, a Swift trap (overflow, bounds, a broken invariant) or a hang is a finding.
import Foundation

extension HeaderFuzzTarget {
    static let selected: HeaderFuzzTarget = {
        let name = ProcessInfo.processInfo.environment["FUZZ_TARGET"] ?? "headers"
        guard let target = HeaderFuzzTarget(rawValue: name) else {
            FileHandle.standardError.write(Data("unknown FUZZ_TARGET \(name); one of \(allCases.map(\.rawValue))\n".utf8))
            exit(2)
        }
        return target
    }()
}

/// Before fuzzing: `FUZZ_TARGET=list` prints the targets this binary knows, one a line, and exits (Fuzz/run.sh
/// runs every one it lists); an unknown target ends the run here, before any input.
@_cdecl("LLVMFuzzerInitialize")
public func fuzzerInitialize(_ argc: UnsafeMutablePointer<CInt>?, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?) -> CInt {
    if ProcessInfo.processInfo.environment["FUZZ_TARGET"] == "list" {
        print(HeaderFuzzTarget.allCases.map(\.rawValue).joined(separator: "\n"))
        exit(0)
    }
    _ = HeaderFuzzTarget.selected
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    guard let start, count > 0 else { return 0 }
    let broken = headerFuzzOne(Data(UnsafeRawBufferPointer(start: start, count: count)), target: HeaderFuzzTarget.selected)
    // A broken invariant must stop the run for libFuzzer to keep the input: that is what a trap is for here.
    if !broken.isEmpty { preconditionFailure(broken.joined(separator: "; ")) }
    return 0
}
