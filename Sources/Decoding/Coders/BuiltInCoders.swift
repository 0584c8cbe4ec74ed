/// The coders `ImageCodersManager` starts with, least preferred first (the last is asked first).
enum BuiltInCoders {
    static func all() -> [any ImageCoder] {
        [TIFFCoder(), HEIFCoder(), AVIFCoder(), WebPCoder(), ICOCoder(), BMPCoder(), GIFCoder(), PNGCoder(), JPEGCoder()]
    }
}
