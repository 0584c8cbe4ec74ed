import Foundation
@testable import Decoding

/// The corpus's tolerance measures: a 16x16 box-filtered thumbnail and mean absolute error.
enum PixelComparison {
    /// 16x16 area-filtered RGBA8 of the image's first frame (the corpus's `thumb16_rgba_b64`).
    static func thumb16(_ image: DecodedImage) -> [UInt8] {
        let first = DecodedImage(width: image.width, height: image.height, pixels: image.pixels, format: image.format)
        return ImageScaler.resize(first, width: 16, height: 16).pixels
    }

    /// Mean absolute error between two equal-length byte arrays (infinity when lengths differ).
    static func meanAbsoluteError(_ a: [UInt8], _ b: [UInt8]) -> Double {
        guard a.count == b.count, !a.isEmpty else { return .infinity }
        var sum = 0
        for i in a.indices { sum += abs(Int(a[i]) - Int(b[i])) }
        return Double(sum) / Double(a.count)
    }

    /// Largest absolute difference between two equal-length byte arrays.
    static func maxError(_ a: [UInt8], _ b: [UInt8]) -> Int {
        guard a.count == b.count else { return 255 }
        var worst = 0
        for i in a.indices { worst = max(worst, abs(Int(a[i]) - Int(b[i]))) }
        return worst
    }
}
