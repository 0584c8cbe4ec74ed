import Decoding

/// Draws an image in a terminal with 24-bit colour: each character cell is an upper half block "▀" whose
/// foreground is one pixel and whose background is the pixel below it, so a cell shows two square-ish pixels.
///
/// The image is shrunk to fit (never enlarged), shown the right way up (EXIF orientation applied), and
/// composited over a grey checkerboard so transparency is visible.
enum HalfBlockRenderer {
    /// The upper half block: foreground paints the top pixel, background the bottom one.
    static let upperHalfBlock = "\u{2580}"

    /// Terminal lines (no newlines) drawing `image` in at most `maxColumns` × `maxRows` cells.
    /// Each line ends with a colour reset. Returns no lines for an empty image or no room.
    static func render(_ image: DecodedImage, maxColumns: Int, maxRows: Int) -> [String] {
        guard maxColumns > 0, maxRows > 0, image.width > 0, image.height > 0,
              image.pixels.count >= image.width * image.height * 4 else { return [] }
        let swaps = image.orientation.swapsDimensions
        let shownWidth = swaps ? image.height : image.width
        let shownHeight = swaps ? image.width : image.height
        let scale = min(1, Double(maxColumns) / Double(shownWidth), Double(maxRows * 2) / Double(shownHeight))
        let outWidth = max(1, min(maxColumns, Int((Double(shownWidth) * scale).rounded())))
        let outHeight = max(1, min(maxRows * 2, Int((Double(shownHeight) * scale).rounded())))
        // Shrink the stored (unoriented) pixels, first frame only, then read them through the orientation.
        let still = DecodedImage(width: image.width, height: image.height,
                                 pixels: Array(image.pixels.prefix(image.width * image.height * 4)),
                                 format: image.format, orientation: image.orientation)
        let small = ImageScaler.resize(still, width: swaps ? outHeight : outWidth, height: swaps ? outWidth : outHeight)
        let pixel = OrientedPixels(small)

        var lines: [String] = []
        lines.reserveCapacity((outHeight + 1) / 2)
        var y = 0
        while y < outHeight {
            var line = ""
            var lastForeground: RGB?
            var lastBackground: RGB?
            for x in 0..<outWidth {
                let top = pixel.composited(x: x, y: y)
                if top != lastForeground {
                    line += "\u{1B}[38;2;\(top.r);\(top.g);\(top.b)m"
                    lastForeground = top
                }
                if y + 1 < outHeight {
                    let bottom = pixel.composited(x: x, y: y + 1)
                    if bottom != lastBackground {
                        line += "\u{1B}[48;2;\(bottom.r);\(bottom.g);\(bottom.b)m"
                        lastBackground = bottom
                    }
                } else if x == 0 {
                    // Odd height: the last row's lower half stays the terminal's own background.
                    line += "\u{1B}[49m"
                }
                line += upperHalfBlock
            }
            line += "\u{1B}[0m"
            lines.append(line)
            y += 2
        }
        return lines
    }

    struct RGB: Equatable {
        var r: UInt8, g: UInt8, b: UInt8
    }

    /// Reads pixels of a stored image as they are displayed after its EXIF orientation.
    private struct OrientedPixels {
        let image: DecodedImage
        let width: Int   // displayed
        let height: Int  // displayed

        init(_ image: DecodedImage) {
            self.image = image
            width = image.orientation.swapsDimensions ? image.height : image.width
            height = image.orientation.swapsDimensions ? image.width : image.height
        }

        /// Stored coordinates of displayed pixel (x, y): the inverse of the EXIF transform.
        private func stored(x: Int, y: Int) -> (Int, Int) {
            let w = width - 1, h = height - 1
            switch image.orientation {
            case .up: return (x, y)
            case .upMirrored: return (w - x, y)
            case .down: return (w - x, h - y)
            case .downMirrored: return (x, h - y)
            case .leftMirrored: return (y, x)
            case .right: return (y, w - x)
            case .rightMirrored: return (h - y, w - x)
            case .left: return (h - y, x)
            }
        }

        /// The pixel over a checkerboard of two greys (4×4-pixel squares), straight alpha blended.
        func composited(x: Int, y: Int) -> RGB {
            let (sx, sy) = stored(x: x, y: y)
            let i = (sy * image.width + sx) * 4
            guard sx >= 0, sy >= 0, sx < image.width, sy < image.height, i + 3 < image.pixels.count else {
                return RGB(r: 0, g: 0, b: 0)
            }
            let a = Int(image.pixels[i + 3])
            let checker: Int = ((x / 4) + (y / 4)) % 2 == 0 ? 0x66 : 0x99
            func blend(_ c: UInt8) -> UInt8 { UInt8((Int(c) * a + checker * (255 - a) + 127) / 255) }
            return RGB(r: blend(image.pixels[i]), g: blend(image.pixels[i + 1]), b: blend(image.pixels[i + 2]))
        }
    }
}
