#if canImport(UIKit)
import UIKit
import Decoding

/// `UIImageView` as an `ImageTarget`: `imageView.setImage(with: url, placeholder: ...)` as with
/// `UIImageView+AFNetworking`. Downloads deliver on the main queue; call `setImage` from the main thread.
extension UIImageView: ImageTarget {
    /// UIKit views may only be touched on the main thread.
    public nonisolated var imageDeliveryQueue: DispatchQueue? { .main }

    /// Converts `image` to a `UIImage` and sets `image` on the main thread.
    public nonisolated func displayImage(_ image: DecodedImage?) {
        if Thread.isMainThread {
            MainActor.assumeIsolated { self.image = image?.makeUIImage() }
        } else {
            // Only reached when `setImage` was called off the main thread against UIKit's rules.
            DispatchQueue.main.async { MainActor.assumeIsolated { self.image = image?.makeUIImage() } }
        }
    }
}

extension DecodedImage {
    /// A `UIImage` over these pixels (no copy beyond one `Data`), with the image's scale and EXIF orientation;
    /// animated images become `UIImage.animatedImage` (UIKit shows every frame for the average duration, so
    /// every frame is composited here: keep `animation` instead to play frames on demand).
    public func makeUIImage() -> UIImage? {
        let orientation = uiImageOrientation
        guard let first = Self.makeCGImage(pixels: pixels, width: width, height: height) else { return nil }
        let still = UIImage(cgImage: first, scale: CGFloat(scale), orientation: orientation)
        guard let animation, animation.frameCount > 1 else { return still }
        var images: [UIImage] = []
        for index in 0..<animation.frameCount {
            let framePixels = frames.count == animation.frameCount ? frames[index].pixels : try? animation.frame(at: index)
            guard let framePixels, let image = Self.makeCGImage(pixels: framePixels, width: width, height: height) else {
                return still
            }
            images.append(UIImage(cgImage: image, scale: CGFloat(scale), orientation: orientation))
        }
        let duration = animation.totalDuration
        guard duration > 0 else { return still }
        return UIImage.animatedImage(with: images, duration: duration) ?? still
    }

    /// EXIF orientation 1...8 as UIKit's (the same eight transforms under different names).
    var uiImageOrientation: UIImage.Orientation {
        switch orientation {
        case .up: return .up
        case .upMirrored: return .upMirrored
        case .down: return .down
        case .downMirrored: return .downMirrored
        case .leftMirrored: return .leftMirrored
        case .right: return .right
        case .rightMirrored: return .rightMirrored
        case .left: return .left
        }
    }

    /// RGBA8 with straight alpha is `CGImageAlphaInfo.last` (CoreGraphics draws non-premultiplied images;
    /// only bitmap contexts require premultiplied alpha).
    static func makeCGImage(pixels: [UInt8], width: Int, height: Int) -> CGImage? {
        let (bytesPerRow, rowOverflow) = width.multipliedReportingOverflow(by: 4)
        let (byteCount, overflow) = bytesPerRow.multipliedReportingOverflow(by: height)
        guard width > 0, height > 0, !rowOverflow, !overflow, pixels.count == byteCount,
              let provider = CGDataProvider(data: Data(pixels) as CFData)
        else { return nil }
        return CGImage(
            width: width, height: height, bitsPerComponent: 8, bitsPerPixel: 32, bytesPerRow: bytesPerRow,
            space: CGColorSpace(name: CGColorSpace.sRGB) ?? CGColorSpaceCreateDeviceRGB(),
            bitmapInfo: CGBitmapInfo(rawValue: CGImageAlphaInfo.last.rawValue),
            provider: provider, decode: nil, shouldInterpolate: true, intent: .defaultIntent)
    }
}
#endif
