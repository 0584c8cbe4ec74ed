import Decoding
import Foundation

/// What `imagedl decode` found out about one file.
struct DecodeReport {
    var file: String
    /// Sniffed from the content; `.undefined` when no known signature matched.
    var format: ImageFormat
    var width: Int?
    var height: Int?
    var frames: Int?
    /// Seconds of one loop, for animations.
    var duration: Double?
    var loopCount: Int?
    var orientation: ImageOrientation?
    var decodeSeconds: Double?
    /// The data ended early (or is damaged) and only part of the image could be decoded.
    var isIncomplete = false
    /// One line naming what went wrong, nil on success.
    var error: String?
    /// What colour management did.
    var color: ColorReport?

    /// `colorState` as text: "sRGB", "converted" or "not converted", with what it came from or why.
    struct ColorReport {
        let state: String
        let detail: String?
        let profileBytes: Int?

        init(_ image: DecodedImage) {
            switch image.colorState {
            case .sRGB: (state, detail) = ("sRGB", nil)
            case .convertedToSRGB(let from): (state, detail) = ("converted", from)
            case .notConverted(let reason): (state, detail) = ("not converted", reason)
            }
            profileBytes = image.iccProfile?.count
        }
    }

    var succeeded: Bool { error == nil }

    /// `{"file", "format", "width", "height", "frames", "duration", "loop_count", "orientation", "color",
    /// "color_detail", "icc_profile_bytes", "incomplete", "error"}` in that order ("duration": seconds of one loop,
    /// null for a still image; "loop_count": plays of an animation, 0 forever, null for a still image; "color": "sRGB", "converted" or "not converted"; "incomplete": true when the data ends early
    /// and only part of the image was decoded, as the plain line says); values that do not apply are null
    /// (format is null when the content is not a known image format, incomplete when nothing was decoded).
    var json: JSONValue {
        func optional(_ value: Int?) -> JSONValue { value.map(JSONValue.int) ?? .null }
        return .object([
            ("file", .string(file)),
            ("format", format == .undefined ? .null : .string(format.rawValue)),
            ("width", optional(width)),
            ("height", optional(height)),
            ("frames", optional(frames)),
            ("duration", duration.map(JSONValue.double) ?? .null),
            ("loop_count", (frames ?? 1) > 1 ? optional(loopCount) : .null),
            ("orientation", optional(orientation?.rawValue)),
            ("color", color.map { .string($0.state) } ?? .null),
            ("color_detail", color?.detail.map(JSONValue.string) ?? .null),
            ("icc_profile_bytes", optional(color?.profileBytes)),
            ("incomplete", width == nil ? .null : .bool(isIncomplete)),
            ("error", error.map(JSONValue.string) ?? .null),
        ])
    }

    /// The human-readable line: `file: jpeg 640x480, 1 frame, orientation 1 (up), decoded in 4.2 ms`.
    var line: String {
        if let error { return "\(file): error: \(error)" }
        var parts = ["\(format.rawValue) \(width ?? 0)x\(height ?? 0)"]
        let frameCount = frames ?? 1
        if frameCount > 1 {
            let plays = loopCount ?? 0
            let loops = plays == 0 ? "loops forever" : plays == 1 ? "plays once" : "plays \(plays) times"
            let length = duration.map { ", \(Formatting.duration($0))" } ?? ""
            parts.append("\(frameCount) frames\(length), \(loops)")
        } else {
            parts.append("1 frame")
        }
        if let orientation { parts.append("orientation \(orientation.rawValue) (\(orientation.name))") }
        if isIncomplete { parts.append("incomplete (data ends early)") }
        if let color, color.state != "sRGB" { parts.append("colour \(color.state)" + (color.detail.map { " (\($0))" } ?? "")) }
        if let decodeSeconds { parts.append("decoded in \(Formatting.duration(decodeSeconds))") }
        return "\(file): " + parts.joined(separator: ", ")
    }
}

extension ImageOrientation {
    /// The UIKit-style name, for people reading the output.
    var name: String {
        switch self {
        case .up: return "up"
        case .upMirrored: return "up mirrored"
        case .down: return "down"
        case .downMirrored: return "down mirrored"
        case .leftMirrored: return "left mirrored"
        case .right: return "right"
        case .rightMirrored: return "right mirrored"
        case .left: return "left"
        }
    }
}
