import Foundation

/// A binary PPM (P6, 8-bit RGB): what `djpeg` writes and `cjpeg` reads. Used to cut photo crops for the
/// generated test images without depending on the JPEG coder under test.
struct PPMImage {
    let width: Int
    let height: Int
    /// RGB8, top-down rows.
    let rgb: [UInt8]

    enum Failure: Error, CustomStringConvertible {
        case malformed(String)
        var description: String {
            switch self { case .malformed(let why): return "malformed PPM: \(why)" }
        }
    }

    init(width: Int, height: Int, rgb: [UInt8]) {
        self.width = width
        self.height = height
        self.rgb = rgb
    }

    /// Parses "P6 <width> <height> 255\n<rgb>" (comments allowed in the header).
    init(data: Data) throws {
        let bytes = [UInt8](data)
        var index = 0
        func token() throws -> String {
            var out = ""
            while index < bytes.count {
                let b = bytes[index]
                if b == UInt8(ascii: "#") {
                    while index < bytes.count, bytes[index] != 0x0A { index += 1 }
                } else if b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 {
                    if !out.isEmpty { break }
                    index += 1
                } else {
                    out.append(Character(UnicodeScalar(b)))
                    index += 1
                    if out.count > 16 { throw Failure.malformed("header token too long") }
                }
            }
            return out
        }
        guard try token() == "P6" else { throw Failure.malformed("not P6") }
        guard let w = Int(try token()), let h = Int(try token()), let maxValue = Int(try token()),
              w > 0, h > 0, w <= 65_535, h <= 65_535, maxValue == 255 else {
            throw Failure.malformed("bad header")
        }
        index += 1  // the single whitespace byte after the header
        let count = w * h * 3
        guard index + count <= bytes.count else { throw Failure.malformed("short pixel data") }
        self.init(width: w, height: h, rgb: Array(bytes[index..<index + count]))
    }

    /// The P6 encoding of this image.
    var data: Data {
        var out = Data("P6\n\(width) \(height)\n255\n".utf8)
        out.append(contentsOf: rgb)
        return out
    }

    /// A `w` × `h` crop at (`x`, `y`), clamped to the image.
    func crop(x: Int, y: Int, width w: Int, height h: Int) -> PPMImage {
        let w = Swift.max(1, Swift.min(w, width))
        let h = Swift.max(1, Swift.min(h, height))
        let x = Swift.max(0, Swift.min(x, width - w))
        let y = Swift.max(0, Swift.min(y, height - h))
        var out = [UInt8]()
        out.reserveCapacity(w * h * 3)
        for row in y..<(y + h) {
            let start = (row * width + x) * 3
            out.append(contentsOf: rgb[start..<(start + w * 3)])
        }
        return PPMImage(width: w, height: h, rgb: out)
    }

    /// RGBA8 with opaque alpha, for the PNG encoder.
    var rgba: [UInt8] {
        var out = [UInt8](repeating: 255, count: width * height * 4)
        for i in 0..<(width * height) {
            out[i * 4] = rgb[i * 3]
            out[i * 4 + 1] = rgb[i * 3 + 1]
            out[i * 4 + 2] = rgb[i * 3 + 2]
        }
        return out
    }
}
