import CImageCodecs

/// Names and versions of the system codec libraries this build links, for diagnostics and bug reports.
public enum CodecLibraries {
    /// For example "libjpeg-turbo 2.1.5".
    public static var jpeg: String { String(cString: cic_libjpeg_version()) }
    /// For example "libpng 1.6.39".
    public static var png: String { String(cString: cic_libpng_version()) }
}
