import Foundation
import Testing
import TestRequirements
import Decoding
@testable import ImagedlCore

/// Thumbnails are colour-managed: the pipeline's shrink-on-load decode (the JPEG 1/8 DC path included) returns
/// sRGB pixels, so a wide-gamut photo does not come out dull.
struct ThumbnailColorTests {
    static let fixture = TestFolders.support.appendingPathComponent("DecoderFixtures/color_adobergb.jpg")

    @Test(.requires(.lcms2))
    func thumbnailOfAnAdobeRGBPhotoIsConvertedToSRGB() throws {
        let data = try Data(contentsOf: Self.fixture)
        var options = ThumbnailOptions()
        options.size = PixelSize(width: 8, height: 6)
        let output = try ThumbnailPipeline(options: options).run(data)
        guard case .convertedToSRGB = output.image.colorState else {
            Issue.record("thumbnail not converted: \(output.image.colorState)")
            return
        }
        // The same steps on unconverted pixels give other colours: the conversion really happened.
        let kept = try ImageCodersManager.shared.decode(data, options: ImageDecodingOptions(
            thumbnailPixelSize: CGSize(width: 8, height: 8), decodeFirstFrameOnly: true, colorManagement: .keepOriginal,
            shrinkOnLoad: .fit))
        let unmanaged = try kept.resized(toWidth: 8, height: 6, mode: .fit)
        #expect(unmanaged.pixels != output.image.pixels)
    }
}
