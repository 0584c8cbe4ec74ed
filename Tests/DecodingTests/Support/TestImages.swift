import Foundation
@testable import Decoding

/// Small synthetic images for the pixel-operation and encoder tests.
enum TestImages {
    /// A `width`×`height` image whose pixel (x, y) is `pixel(x, y)` as (r, g, b, a).
    static func make(_ width: Int, _ height: Int, format: ImageFormat = .png, orientation: ImageOrientation = .up,
                     _ pixel: (Int, Int) -> (UInt8, UInt8, UInt8, UInt8)) -> DecodedImage {
        var bytes = [UInt8]()
        bytes.reserveCapacity(width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let p = pixel(x, y)
                bytes += [p.0, p.1, p.2, p.3]
            }
        }
        return DecodedImage(width: width, height: height, pixels: bytes, format: format, orientation: orientation)
    }

    /// One colour everywhere.
    static func solid(_ width: Int, _ height: Int, _ rgba: (UInt8, UInt8, UInt8, UInt8)) -> DecodedImage {
        make(width, height) { _, _ in rgba }
    }

    /// Every pixel different: r = x, g = y, b = x + y (small images only), opaque.
    static func coordinates(_ width: Int, _ height: Int, orientation: ImageOrientation = .up) -> DecodedImage {
        make(width, height, orientation: orientation) { x, y in (UInt8(x), UInt8(y), UInt8(x + y), 255) }
    }

    /// A smooth, colourful opaque photo-like pattern (gradients plus a few soft waves).
    static func photo(_ width: Int, _ height: Int) -> DecodedImage {
        make(width, height) { x, y in
            let fx = Double(x) / Double(width), fy = Double(y) / Double(height)
            let r = 128 + 100 * sin(fx * 6.1 + fy * 2.3)
            let g = 128 + 100 * cos(fy * 5.3 - fx * 1.7)
            let b = 255 * fx * fy
            return (UInt8(r), UInt8(g), UInt8(b), 255)
        }
    }

    /// RGBA of pixel (x, y).
    static func pixel(_ image: DecodedImage, _ x: Int, _ y: Int) -> [UInt8] {
        let i = (y * image.width + x) * 4
        return Array(image.pixels[i..<(i + 4)])
    }
}
