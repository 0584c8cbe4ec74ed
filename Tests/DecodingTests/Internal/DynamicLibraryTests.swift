import CDynamicLoading
@testable import Decoding
import Foundation
import Testing

/// The one way a library is loaded: `DynamicLibrary.load`'s cache (once per library type and soname, failures
/// included) and the C symbol-table idiom every shim fills its entry points with (cdl.h), on libm, which every
/// machine has.
@Suite struct DynamicLibraryTests {
    /// Counts how often a load's resolve ran.
    final class Counter: @unchecked Sendable {  // `lock` guards `count`
        private let lock = NSLock()
        private var count = 0
        func increment() { lock.withLock { count += 1 } }
        var value: Int { lock.withLock { count } }
    }

    /// A library type of this test alone, so no other test's load shares its cache entries.
    struct Probe: Sendable { let soname: String }
    struct OtherProbe: Sendable { let soname: String }

    @Test func aLibraryIsResolvedOncePerTypeAndSoname() throws {
        let resolves = Counter()
        let load = { () -> Result<Probe, LibraryUnavailable> in
            DynamicLibrary.load("libm.so.6", as: Probe.self) { library in
                resolves.increment()
                return .success(Probe(soname: library.soname))
            }
        }
        #expect(try load().get().soname == "libm.so.6")
        #expect(try load().get().soname == "libm.so.6")
        #expect(resolves.value == 1)
        // Another library type over the same soname resolves its own table.
        let other = DynamicLibrary.load("libm.so.6", as: OtherProbe.self) { library in
            resolves.increment()
            return .success(OtherProbe(soname: library.soname))
        }
        #expect(try other.get().soname == "libm.so.6" && resolves.value == 2)
        // ... and neither replaces the other's entry.
        #expect(try load().get().soname == "libm.so.6" && resolves.value == 2)
    }

    /// A missing library fails with the loader's reason, naming the soname, the same each time, and nothing is resolved.
    @Test func aMissingLibraryFailsWithTheLoadersReason() {
        let resolves = Counter()
        let soname = "libdynamic-library-tests-not-installed.so.9"
        var reasons: [String] = []
        for _ in 0..<2 {
            let result = DynamicLibrary.load(soname, as: Probe.self) { library in
                resolves.increment()
                return .success(Probe(soname: library.soname))
            }
            guard case .failure(let why) = result else {
                Issue.record("a library that does not exist loaded")
                return
            }
            reasons.append(why.description)
        }
        #expect(resolves.value == 0)
        #expect(reasons.count == 2 && reasons[0] == reasons[1])
        #expect(reasons.first?.hasPrefix("\(soname) unavailable: ") == true && reasons.first?.contains(soname + ":") == true)
    }

    /// Two function-pointer slots filled by `cdl_resolve` from libm.
    private func resolve(_ names: [(StaticString, optional: Bool)]) throws -> (status: Int32, slots: [UnsafeMutableRawPointer?], reason: String) {
        let libm = try DynamicLibrary.open("libm.so.6").get()
        let table = names.enumerated().map { index, entry in
            cdl_symbol(name: UnsafeRawPointer(entry.0.utf8Start).assumingMemoryBound(to: CChar.self),
                       offset: index * MemoryLayout<UnsafeMutableRawPointer?>.stride, optional: entry.optional ? 1 : 0)
        }
        var slots = [UnsafeMutableRawPointer?](repeating: nil, count: names.count)
        var reason = [CChar](repeating: 0, count: 128)
        let status = slots.withUnsafeMutableBytes { api in
            cdl_resolve(libm.handle, table, table.count, api.baseAddress, &reason, reason.count)
        }
        return (status, slots, String(decoding: reason.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }

    @Test func anOptionalSymbolMayBeAbsent() throws {
        let result = try resolve([("cos", optional: false), ("cdl_no_such_symbol", optional: true)])
        #expect(result.status == 0 && result.reason.isEmpty)
        #expect(result.slots[0] != nil && result.slots[1] == nil)
    }

    @Test func aRequiredSymbolThatIsAbsentFailsNamingIt() throws {
        let result = try resolve([("cos", optional: false), ("cdl_no_such_symbol", optional: false)])
        #expect(result.status == -1)
        #expect(result.reason == "symbol cdl_no_such_symbol not found")
    }

    /// Swift's own lookups (libwebp's entry points) go through the same table: a found function is callable, a
    /// missing one fails naming it.
    @Test func aSwiftLookupResolvesThroughTheTable() throws {
        let libm = try DynamicLibrary.open("libm.so.6").get()
        let cosine = try libm.function("cos", as: (@convention(c) (Double) -> Double).self)
        #expect(cosine(0) == 1)
        do {
            _ = try libm.function("cdl_no_such_symbol", as: (@convention(c) () -> Void).self)
            Issue.record("a symbol libm does not have resolved")
        } catch {
            #expect(String(describing: error) == "libm.so.6 unavailable: symbol cdl_no_such_symbol not found")
        }
    }
}
