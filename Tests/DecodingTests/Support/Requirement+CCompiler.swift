import Foundation
import TestRequirements

extension Requirement {
    /// A C compiler: the Swift toolchain's own clang (beside `swift`), else clang or cc on PATH. The JPEG XL tests
    /// build a stand-in libjxl with it.
    static let cCompiler = Requirement("a C compiler", install: "the Swift toolchain's clang (or apt-get install gcc)") {
        CCompiler.path == nil ? "no clang beside swift, and no clang or cc on PATH" : nil
    }
}

enum CCompiler {
    static let path: String? = {
        if let swift = Executables.find("swift") {
            let resolved = URL(fileURLWithPath: swift).resolvingSymlinksInPath().deletingLastPathComponent()
            let clang = resolved.appendingPathComponent("clang").path
            if FileManager.default.isExecutableFile(atPath: clang) { return clang }
        }
        return Executables.find("clang") ?? Executables.find("cc")
    }()
}
