// swift-tools-version:6.0
import PackageDescription

// No package dependencies: JPEG and PNG come from the system's libjpeg-turbo and libpng through
// the CImageCodecs target; optional codecs (libwebp, libheif, libtiff) are loaded with dlopen at run time.
let package = Package(
    name: "OperationDownloader",
    products: [
        .library(name: "OperationDownloader", targets: ["OperationDownloader"]),
        .library(name: "Decoding", targets: ["Decoding"]),
        .executable(name: "imagedl", targets: ["imagedl"]),
    ],
    targets: [
        // The symbol-table idiom every C shim below fills its entry points with (cdl.h).
        .target(name: "CDynamicLoading", linkerSettings: [.linkedLibrary("dl")]),
        .target(
            name: "CImageCodecs",
            dependencies: ["CDynamicLoading"],
            linkerSettings: [
                .linkedLibrary("jpeg"),
                .linkedLibrary("png16"),
                .linkedLibrary("z"),
            ]
        ),
        .target(name: "Decoding", dependencies: ["CImageCodecs", "CDynamicLoading"]),
        // libcurl for the curl transport, loaded with dlopen at run time: no curl headers or library at build time.
        .target(name: "CCurl", dependencies: ["CDynamicLoading"]),
        // libdispatch's C barrier for the callback store: the Swift overlay's generic `sync` costs many times more.
        .target(name: "CDispatchSync"),
        .target(name: "OperationDownloader", dependencies: ["Decoding", "CCurl", "CDispatchSync"]),
        // The command-line tool: a thin `main` over ImagedlCore, which holds everything testable
        // (argument parser, renderers, JSON, the demo's loopback server and its sample images).
        .target(
            name: "ImagedlCore",
            dependencies: ["OperationDownloader", "Decoding"],
            resources: [.copy("Resources/DemoImages")]
        ),
        .executableTarget(name: "imagedl", dependencies: ["ImagedlCore", "OperationDownloader", "Decoding"]),
        // Run with `bash Benchmarks/run.sh` (see Docs/Benchmarks.md); not part of `swift test`.
        .executableTarget(name: "Benchmarks", dependencies: ["OperationDownloader", "Decoding"], path: "Benchmarks/Sources"),
        // What tests need from the machine (`.requires(.libwebp)`): skipped where absent, a failure under
        // OD_REQUIRE_ALL=1, which .ci/run sets.
        .target(name: "TestRequirements", dependencies: ["Decoding"], path: "Tests/TestRequirements"),
        // Test images the test targets make in code (big animations, PNG and GIF framing helpers, AVIF through avifenc).
        .target(name: "TestImages", dependencies: ["Decoding", "TestRequirements"], path: "Tests/TestImages"),
        .testTarget(name: "DecodingTests", dependencies: ["Decoding", "CDynamicLoading", "TestRequirements", "TestImages"]),
        // The code Docs/Usage.md shows, compiled as an application would compile it (a plain import, no
        // @testable); OperationDownloaderTests runs every example and checks the doc quotes it verbatim.
        .target(name: "UsageExamples", dependencies: ["OperationDownloader", "Decoding"], path: "Tests/UsageExamples"),
        // The complete command-line program Docs/Usage.md shows (an `@main` of its own, so not in the library
        // above); OperationDownloaderTests runs the built executable.
        .executableTarget(name: "UsageThumbnailer", dependencies: ["OperationDownloader", "Decoding"], path: "Tests/UsageProgram"),
        .testTarget(
            name: "OperationDownloaderTests",
            dependencies: ["OperationDownloader", "Decoding", "TestRequirements", "TestImages", "UsageExamples"]),
        .testTarget(name: "ImagedlTests", dependencies: ["ImagedlCore", "Decoding", "TestRequirements", "TestImages"]),
    ]
)
