extension PNGIncrementalDecoder: PartialImageRows {
    /// A plain PNG's rows are final as libpng writes them, top-down; Adam7 passes rewrite the whole canvas.
    var partialRows: (settled: Int, content: Int)? {
        guard let progress = stream?.progress, progress.header_ready != 0 else { return nil }
        if progress.interlaced != 0 { return nil }
        let rows = Int(progress.rows_done)
        return (rows, rows)
    }
}
