import Foundation

/// The shrink-on-load fast path for baseline JPEGs whose thumbnail needs 1/8 scale or less: the same pixels
/// as libjpeg's `scale_denom = 8` decode, faster because it skips what libjpeg decodes and throws away
/// (Docs/Processing.md has the timings).
///
/// At 1/8 libjpeg outputs each 8×8 block's DC coefficient (its mean) and, for 4:2:0 chroma, a 2×2 IDCT of a
/// few coefficients; everything else it decodes is thrown away. `JPEGDCScanner` reads the scan without
/// evaluating what is thrown away, then this type crops, replicates subsampled components (libjpeg does
/// no "fancy" upsampling at this scale) and converts YCbCr with libjpeg's tables: the result is the same,
/// byte for byte (the tests compare against libjpeg on the whole corpus).
///
/// Used only when the caller asks for shrink-on-load (`ImageDecodingOptions.shrinkOnLoad`). Anything
/// unusual — progressive or arithmetic coding, CMYK, RGB JPEGs, 12-bit samples, truncated or corrupt data —
/// returns nil and libjpeg decodes the file as before.
enum JPEGDCThumbnailDecoder {
    /// The 1/8 image, or nil when libjpeg must decode this file.
    static func decode(_ data: Data, options: ImageDecodingOptions) -> DecodedImage? {
        decodeWithProfile(data, options: options)?.image
    }

    /// The 1/8 image and the file's embedded ICC profile (APP2 chunks joined), for colour conversion: this
    /// path returns the pixels as stored, like libjpeg's output before any colour management.
    static func decodeWithProfile(_ data: Data, options: ImageDecodingOptions) -> (image: DecodedImage, iccProfile: [UInt8]?)? {
        guard options.shrinkOnLoad != nil else { return nil }
        return data.withUnsafeBytes { bytes -> (image: DecodedImage, iccProfile: [UInt8]?)? in
            guard let header = JPEGStreamHeader.parse(bytes), isSupported(header),
                  (try? options.checkDimensions(width: header.width, height: header.height)) != nil,
                  JPEGDecompressor.scaleDenominator(width: header.width, height: header.height, options: options) == 8
            else { return nil }
            let segments = JPEGEntropySegments(bytes, from: header.scanDataOffset)
            let sizes = scaledSizes(header)
            // A scan that runs to the end of the data is a truncated file: libjpeg pads and flags it.
            guard segments.terminated,
                  let planes = JPEGDCScanner(header: header, scaledSizes: sizes).decode(segments) else { return nil }
            return (render(planes, header: header, scaledSizes: sizes), header.iccProfile)
        }
    }

    /// Sequential Huffman, one scan holding every component, gray or YCbCr.
    private static func isSupported(_ h: JPEGStreamHeader) -> Bool {
        guard !h.progressive, h.spectralStart == 0, h.spectralEnd == 63, h.approximationHigh == 0,
              h.approximationLow == 0, h.scanComponents.count == h.components.count else { return false }
        if h.components.count == 3 {
            // libjpeg treats these as RGB rather than YCbCr: leave them to it.
            if h.adobeTransform == 0 || h.components.map(\.id) == [0x52, 0x47, 0x42] { return false }
        }
        return h.components.allSatisfy { h.quant[$0.quantTable].count == 64 }
    }

    /// libjpeg's DCT scaled size per component at 1/8 (jdmaster.c): chroma sampled at half the luma
    /// resolution in both directions gets a 2×2 IDCT instead of upsampling; everything else 1×1.
    static func scaledSizes(_ h: JPEGStreamHeader) -> [Int] {
        let hMax = h.components.map(\.h).max() ?? 1, vMax = h.components.map(\.v).max() ?? 1
        return h.scanComponents.map { index in
            let c = h.components[index]
            var size = 1
            while size < 8, hMax % (c.h * size * 2) == 0, vMax % (c.v * size * 2) == 0 { size *= 2 }
            return size
        }
    }

    /// Sample planes → RGBA8 at ⌈width/8⌉ × ⌈height/8⌉: cropped, components still below the output
    /// resolution replicated (libjpeg upsamples without "fancy" filtering at this scale), YCbCr → RGB.
    private static func render(_ planes: JPEGDCScanner.Planes, header: JPEGStreamHeader, scaledSizes: [Int]) -> DecodedImage {
        let width = (header.width + 7) / 8, height = (header.height + 7) / 8
        let hMax = header.components.map(\.h).max() ?? 1, vMax = header.components.map(\.v).max() ?? 1
        let samples: [[UInt8]] = header.components.indices.map { c in
            let component = header.components[c]
            let single = header.components.count == 1
            return crop(planes.samples[c], stride: planes.widths[c], rows: planes.heights[c],
                        xFactor: single ? 1 : max(1, hMax / (component.h * scaledSizes[c])),
                        yFactor: single ? 1 : max(1, vMax / (component.v * scaledSizes[c])),
                        width: width, height: height)
        }
        var pixels = [UInt8](repeating: 255, count: width * height * 4)
        pixels.withUnsafeMutableBufferPointer { out in
            if samples.count == 1 {
                samples[0].withUnsafeBufferPointer { y in
                    for i in 0..<(width * height) {
                        out[4 * i] = y[i]; out[4 * i + 1] = y[i]; out[4 * i + 2] = y[i]
                    }
                }
            } else {
                YCbCrTables.shared.convert(samples[0], samples[1], samples[2], count: width * height, into: out)
            }
        }
        return DecodedImage(width: width, height: height, pixels: pixels, format: .jpeg, orientation: header.orientation)
    }

    /// A plane brought to the output grid: sample (x / xFactor, y / yFactor), cropped to width × height.
    private static func crop(_ plane: [UInt8], stride: Int, rows: Int, xFactor: Int, yFactor: Int,
                             width: Int, height: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: width * height) { out, initialized in
            plane.withUnsafeBufferPointer { p in
                guard let source = p.baseAddress, let target = out.baseAddress else { return }
                for y in 0..<height {
                    let row = source + min(y / yFactor, rows - 1) * stride
                    let o = target + y * width
                    if xFactor == 1 {
                        o.initialize(from: row, count: min(width, stride))
                        if stride < width { (o + stride).initialize(repeating: row[stride - 1], count: width - stride) }
                    } else {
                        for x in 0..<width { o[x] = row[min(x / xFactor, stride - 1)] }
                    }
                }
            }
            initialized = width * height
        }
    }
}

/// libjpeg's YCbCr → RGB fixed-point tables (jdcolor.c), so gray and 4:4:4 output match it exactly.
final class YCbCrTables: Sendable {
    static let shared = YCbCrTables()
    private let crR: [Int32], cbB: [Int32], crG: [Int32], cbG: [Int32]

    private init() {
        let one = 1 << 16, half = Int32(1 << 15)
        func fix(_ x: Double) -> Int32 { Int32((x * Double(one) + 0.5).rounded(.down)) }
        crR = (0..<256).map { (fix(1.40200) * Int32($0 - 128) + half) >> 16 }
        cbB = (0..<256).map { (fix(1.77200) * Int32($0 - 128) + half) >> 16 }
        crG = (0..<256).map { -fix(0.71414) * Int32($0 - 128) }
        cbG = (0..<256).map { -fix(0.34414) * Int32($0 - 128) + half }
    }

    func convert(_ y: [UInt8], _ cb: [UInt8], _ cr: [UInt8], count: Int, into out: UnsafeMutableBufferPointer<UInt8>) {
        guard y.count >= count, cb.count >= count, cr.count >= count, out.count >= count * 4 else { return }
        y.withUnsafeBufferPointer { y in cb.withUnsafeBufferPointer { cb in cr.withUnsafeBufferPointer { cr in
        crR.withUnsafeBufferPointer { crR in cbB.withUnsafeBufferPointer { cbB in
        crG.withUnsafeBufferPointer { crG in cbG.withUnsafeBufferPointer { cbG in
            for i in 0..<count {
                let l = Int32(y[i]), b = Int(cb[i]), r = Int(cr[i])
                out[4 &* i] = UInt8(clamping: l &+ crR[r])
                out[4 &* i &+ 1] = UInt8(clamping: l &+ ((cbG[b] &+ crG[r]) >> 16))
                out[4 &* i &+ 2] = UInt8(clamping: l &+ cbB[b])
            }
        } } } } } } }
    }
}
