import Foundation
import Testing
@testable import OperationDownloader

/// `traceparent` and `tracestate` as W3C Trace Context (level 1) defines them.
@Suite struct TraceContextTests {
    static let valid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

    @Test func aValidHeaderIsReadAndWrittenBack() throws {
        let context = try #require(ImageDownloaderTraceContext(traceParent: Self.valid, traceState: "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"))
        #expect(context.traceID == "4bf92f3577b34da6a3ce929d0e0e4736")
        #expect(context.spanID == "00f067aa0ba902b7")
        #expect(context.flags == 1 && context.isSampled)
        #expect(context.traceParent == Self.valid)
        #expect(context.traceState == "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE")
    }

    @Test(arguments: [
        "",                                                                  // empty
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",              // no flags
        "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",           // upper case
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",           // all-zero trace id
        "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",           // all-zero span id
        "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",           // version ff
        "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",            // short trace id
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",     // version 00 with more
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902bz-01",           // not hex
        "0-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",            // short version
    ])
    func anInvalidHeaderIsRefused(_ header: String) {
        #expect(ImageDownloaderTraceContext(traceParent: header) == nil)
    }

    /// A later version may add fields: they are accepted and dropped (the version sent is 00).
    @Test func aLaterVersionWithMoreFieldsIsAccepted() throws {
        let context = try #require(ImageDownloaderTraceContext(traceParent: "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-what-ever"))
        #expect(context.traceParent == "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00")
        #expect(!context.isSampled)
    }

    @Test(arguments: ["no-equals", "=v", "k=", "a=1,\u{7}b=2", String(repeating: "k=v,", count: 33), String(repeating: "x", count: 511) + "=y"])
    func anInvalidTraceStateIsDroppedAndTheTraceKept(_ state: String) throws {
        let context = try #require(ImageDownloaderTraceContext(traceParent: Self.valid, traceState: state))
        #expect(context.traceState == nil)
    }

    /// A request's own context: the same trace, flags and state, a new random span id each time.
    @Test func eachChildHasItsOwnSpanID() throws {
        let parent = try #require(ImageDownloaderTraceContext(traceParent: Self.valid, traceState: "a=1"))
        let children = (0..<100).map { _ in parent.withNewSpanID() }
        #expect(Set(children.map(\.spanID)).count == 100)
        #expect(children.allSatisfy { $0.traceID == parent.traceID && $0.flags == parent.flags && $0.traceState == "a=1" })
        #expect(children.allSatisfy { ImageDownloaderTraceContext(traceParent: $0.traceParent)?.spanID == $0.spanID })
        #expect(children.allSatisfy { $0.spanID.count == 16 && $0.spanID != parent.spanID })
    }
}
