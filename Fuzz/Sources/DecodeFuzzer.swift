// libFuzzer entry point for the Decoding module. Built by Fuzz/run.sh with `-sanitize=fuzzer,address`
// (never by SwiftPM: libFuzzer supplies `main`). One binary, one target per run, chosen with FUZZ_TARGET:
//
//   png gif bmp ico jpeg webp tiff heif   that coder alone: one-shot decode, then chunked incremental decode
//   avif                                  AVIFCoder (libavif, libheif as its fallback), then frames of a sequence
//   exif                                  EXIFOrientation.parse (JPEG APP1 / PNG eXIf / TIFF block)
//   sniff                                 ImageFormat(sniffing:)
//   any                                   ImageCodersManager.shared, one-shot and incremental
//   icc                                   ColorManagement.convertToSRGB with the input as an ICC profile (lcms2)
//
// A crash, an ASan report, a Swift trap (overflow, bounds, force unwrap), a broken invariant of the harness or
// a hang is a finding. Thrown errors are the expected outcome for bad input.
import Decoding
import Foundation

extension FuzzTarget {
    static let selected: FuzzTarget = {
        let name = ProcessInfo.processInfo.environment["FUZZ_TARGET"] ?? "any"
        guard let target = FuzzTarget(rawValue: name) else {
            FileHandle.standardError.write(Data("unknown FUZZ_TARGET \(name); one of \(allCases.map(\.rawValue))\n".utf8))
            exit(2)
        }
        return target
    }()
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    guard let start, count > 0 else { return 0 }
    let bytes = UnsafeRawBufferPointer(start: start, count: count)
    let broken = fuzzOne(Data(bytes), hash: fuzzHash(bytes), target: FuzzTarget.selected)
    // A broken invariant must stop the run for libFuzzer to keep the input: that is what a trap is for here.
    if !broken.isEmpty { preconditionFailure(broken.joined(separator: "; ")) }
    return 0
}
