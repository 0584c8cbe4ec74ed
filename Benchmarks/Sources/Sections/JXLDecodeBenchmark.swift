import Decoding
import Foundation

/// JPEG XL decoding (issue 41): `imagedl decode` of the 12 MP photo as a lossy JPEG XL against `djxl` of the same
/// file, whole processes each (spawn to exit, as wait4 reports them: start-up included on both sides), alternating
/// within each round. djxl decodes to pixels and writes nothing (no output file), imagedl decodes and reports; both
/// use libjxl's thread pool on every core.
struct JXLDecodeBenchmark {
    let context: RunContext
    static let keys = ["jxl_decode_ratio_vs_djxl", "jxl_decode_wall_ratio_vs_djxl", "jxl_decode_ms", "djxl_decode_ms"]

    func run() throws {
        let report = context.report
        let s = DecodeBenchmark.section
        let file = context.fixtures.largeJXL
        let imagedl = URL(fileURLWithPath: context.executable).deletingLastPathComponent().appendingPathComponent("imagedl").path
        guard FileManager.default.fileExists(atPath: file.path) else {
            for key in Self.keys { report.skip(key, reason: "no large.jxl (prepare needs cjxl: apt-get install libjxl-tools)") }
            return
        }
        guard JXLCoder().unavailableReason == nil, ChildProcess.exists("djxl"), FileManager.default.isExecutableFile(atPath: imagedl) else {
            for key in Self.keys { report.skip(key, reason: "needs libjxl0.7, djxl (libjxl-tools) and imagedl built next to the benchmark") }
            return
        }
        var oursCPU = Samples(), theirsCPU = Samples(), oursWall = Samples(), theirsWall = Samples()
        for round in 0...DecodeBenchmark.ratioRounds(context) {
            let ours = try ChildProcess.run([imagedl, "decode", file.path])
            guard ours.status == 0 else { throw BenchmarkError.tool("imagedl decode large.jxl exited with \(ours.status)") }
            let theirs = try ChildProcess.run(["djxl", file.path])
            guard theirs.status == 0 else { throw BenchmarkError.tool("djxl large.jxl exited with \(theirs.status)") }
            guard round > 0 else { continue }  // a warm-up round: page cache, libjxl's first load
            oursCPU.add(ours.cost.cpu * 1000)
            theirsCPU.add(theirs.cost.cpu * 1000)
            oursWall.add(ours.cost.wall * 1000)
            theirsWall.add(theirs.cost.wall * 1000)
        }
        report.detail("jxl_decode_ms", section: s, label: "12 MP lossy JPEG XL, imagedl decode process CPU", unit: "ms", oursCPU)
        report.detail("djxl_decode_ms", section: s, label: "12 MP lossy JPEG XL, djxl process CPU (no output file)", unit: "ms", theirsCPU)
        report.headline("jxl_decode_ratio_vs_djxl", section: s, label: "12 MP JPEG XL decode process CPU ÷ djxl", unit: "×",
                        ratios(oursCPU, theirsCPU))
        report.detail("jxl_decode_wall_ratio_vs_djxl", section: s, label: "12 MP JPEG XL decode process wall time ÷ djxl", unit: "×",
                      ratios(oursWall, theirsWall))
    }
}
