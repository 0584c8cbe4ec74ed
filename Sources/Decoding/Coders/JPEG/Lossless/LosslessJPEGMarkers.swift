/// What a lossless JPEG's APPn segments say: JFIF and Adobe markers (the colour space of three components, as
/// libjpeg-turbo 3.0 reads it), EXIF orientation, the ICC profile.
struct LosslessJPEGMarkers {
    private(set) var orientation = ImageOrientation.up
    private var sawJFIF = false
    private var adobeTransform: Int?
    private var icc = JPEGICCChunks()

    mutating func read(_ marker: UInt8, _ payload: [UInt8]) {
        switch marker {
        case 0xE0:
            if payload.count >= 5, Array(payload.prefix(5)) == Array("JFIF".utf8) + [0] { sawJFIF = true }
        case 0xE1:
            if payload.count > 6, let value = EXIFOrientation.parse(payload) { orientation = value }
        case 0xE2:
            icc.add(payload)
        case 0xEE:
            if payload.count >= 12, Array(payload.prefix(5)) == Array("Adobe".utf8) { adobeTransform = Int(payload[11]) }
        default:
            break  // other APPn, COM
        }
    }

    /// libjpeg-turbo 3.0's guess for a lossless file (jdapimin.c): three components are YCbCr after a JFIF marker
    /// or an Adobe marker whose transform is not 0, and RGB otherwise (whatever the component ids).
    func isYCbCr(components: Int) -> Bool {
        guard components == 3 else { return false }
        if sawJFIF { return true }
        if let adobeTransform { return adobeTransform != 0 }
        return false
    }

    var iccProfile: [UInt8]? { icc.profile }
}
