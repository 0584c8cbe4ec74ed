import Decoding
import Foundation

/// Progressive decoding cost: a download delivered in 16 KB chunks (libcurl's write size, so what URLSession
/// hands the operation) is fed to ONE incremental decoder, asking for a preview after every chunk — the
/// most demanding caller (the downloader throttles previews to one per `progressiveDecodingInterval`; the
/// decoders render a progressive JPEG pass only when a scan completed). Total thread CPU, final image
/// included, is compared with a one-shot decode of the same bytes in the same round.
struct ProgressiveBenchmark {
    let context: RunContext
    static let section = "Progressive"
    static let chunkSize = 16 * 1024

    func run() throws {
        let fixtures = context.fixtures
        var cases: [(key: String, file: URL, label: String)] = [
            ("progressive_cpu_ratio_png", fixtures.png4MP, "4 MP PNG"),
        ]
        if RunContext.jpegCoderAvailable {
            cases.insert(("progressive_cpu_ratio_jpeg", fixtures.largeProgressive, "12 MP progressive JPEG, preview per chunk"), at: 0)
            cases.insert(("progressive_cpu_ratio_baseline", fixtures.largeBaseline, "12 MP baseline JPEG, preview per chunk"), at: 1)
        } else {
            for key in ["progressive_cpu_ratio_jpeg", "progressive_cpu_ratio_baseline"] {
                context.report.skip(key, reason: "no JPEG coder registered in ImageCodersManager yet")
            }
        }
        for item in cases {
            let data = try Data(contentsOf: item.file)
            let (ratio, previews) = try measure(data, previews: true)
            context.report.headline(item.key, section: Self.section, label: "\(item.label): chunked CPU ÷ one-shot CPU", unit: "×", ratio)
            context.report.note(Self.section, "\(item.label): \(data.count / Self.chunkSize + 1) chunks, \(previews) previews returned")
        }
        if RunContext.jpegCoderAvailable {
            let data = try Data(contentsOf: fixtures.largeProgressive)
            let (ratio, _) = try measure(data, previews: false)
            context.report.detail("progressive_cpu_ratio_jpeg_no_previews", section: Self.section, label: "12 MP progressive JPEG, no previews: chunked CPU ÷ one-shot CPU", unit: "×", ratio)
        }
    }

    /// Per-round ratios chunked ÷ one-shot (one warm-up round first), and how many previews the last
    /// chunked decode returned.
    private func measure(_ data: Data, previews: Bool) throws -> (Samples, Int) {
        var ratio = Samples()
        var previewCount = 0
        for round in 0...context.rounds {
            let (oneShot, oneShotCost) = try measureOnThread { try ImageCodersManager.shared.decode(data) }
            let (chunked, chunkedCost) = try measureOnThread { try decodeInChunks(data, previews: previews) }
            guard chunked.image.width == oneShot.width, chunked.image.height == oneShot.height,
                  chunked.image.pixels == oneShot.pixels else {
                throw BenchmarkError.failed("progressive: chunked decode differs from one-shot")
            }
            previewCount = chunked.previews
            if round > 0, oneShotCost.cpu > 0 { ratio.add(chunkedCost.cpu / oneShotCost.cpu) }
        }
        return (ratio, previewCount)
    }

    private func decodeInChunks(_ data: Data, previews: Bool) throws -> (image: DecodedImage, previews: Int) {
        let options = ImageDecodingOptions()
        guard let decoder = ImageCodersManager.shared.incrementalDecoder(for: data.prefix(Self.chunkSize), options: options) else {
            throw BenchmarkError.failed("progressive: no incremental decoder")
        }
        var offset = data.startIndex
        var count = 0
        while offset < data.endIndex {
            let end = min(offset + Self.chunkSize, data.endIndex)
            // A fresh Data per chunk, as URLSession delivers them.
            try decoder.append(Data(data[offset..<end]), isFinal: end == data.endIndex)
            if previews, end < data.endIndex, decoder.currentImage() != nil { count += 1 }
            offset = end
        }
        guard let image = decoder.currentImage(), !image.isIncomplete else {
            throw BenchmarkError.failed("progressive: no complete image after the last chunk")
        }
        return (image, count)
    }
}
