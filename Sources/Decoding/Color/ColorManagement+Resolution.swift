extension ColorManagement.Resolution {
    /// What the pixels are converted from, when this resolution converts pixels.
    var convertsFrom: String? {
        switch self {
        case .matrix(let transform): return transform.description
        case .transform(let transform): return transform.description
        case .identity, .failure: return nil
        }
    }

    /// Converts `count` RGBA8 pixels in place (nothing for `.identity` and `.failure`).
    func apply(to pixels: UnsafeMutablePointer<UInt8>, count: Int) {
        switch self {
        case .matrix(let transform): transform.apply(to: pixels, count: count)
        case .transform(let transform): transform.apply(to: pixels, count: count)
        case .identity, .failure: break
        }
    }
}
