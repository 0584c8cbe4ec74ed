import Foundation

/// What happens to a composited canvas before `AnimatedImage` hands it out: the same steps, in the same
/// order, that turned the first frame into the image's `pixels` (the exact-size scaling, colour conversion,
/// then any processing such as a crop or rounded corners). Each step is a pure function of its input, so a
/// frame composited on demand equals the frame an eager decode would have produced.
struct FramePipeline: Sendable {
    struct Step: Sendable {
        /// What the step does, for equality and debugging ("resize 100x80", "colour ICC profile 'P3'").
        let label: String
        /// The size of the step's output.
        let width: Int
        let height: Int
        let apply: @Sendable ([UInt8]) -> [UInt8]
    }

    private(set) var steps: [Step] = []

    func appending(_ step: Step) -> FramePipeline {
        var copy = self
        copy.steps.append(step)
        return copy
    }

    func apply(_ canvas: [UInt8]) -> [UInt8] {
        steps.reduce(canvas) { pixels, step in step.apply(pixels) }
    }

    var labels: [String] { steps.map(\.label) }
}
