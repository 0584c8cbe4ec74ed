import Foundation

/// `imagedl --demo`: serves the bundled samples on 127.0.0.1 and downloads them with the normal
/// download path, progressive and with previews on a terminal. No network, no arguments needed.
struct DemoCommand {
    let options: DownloadOptions

    func run() -> ExitCode {
        let server: LoopbackHTTPServer
        do {
            server = try LoopbackHTTPServer(routes: DemoSamples.routes())
        } catch {
            Console.err("imagedl: \(error)\n")
            return .failure
        }
        defer { server.stop() }

        var download = options
        download.urls = DemoSamples.samples.map { server.url($0.path) }
        download.progressive = true
        // Previews are the point of the demo on a terminal; in a pipe they would be escape-code noise.
        if !download.json && Terminal.stdoutIsTTY { download.preview = true }
        if !download.json {
            let intro = "imagedl demo: \(DemoSamples.samples.count) downloads from a server of its own on 127.0.0.1:\(server.port)\n"
                + "the progressive JPEG is sent slowly; /missing.png answers 404 on purpose\n\n"
            Console.out(Terminal.stdoutIsTTY ? Terminal.bold(intro) : intro)
        }
        let command = DownloadCommand(options: download)
        let status = command.run()
        if status == .interrupted { return status }
        // Success means every sample behaved as designed: the images arrived and the missing one was a 404.
        let expected = zip(DemoSamples.samples, command.results).allSatisfy { sample, record in
            sample.file == nil ? record.state == .failed : record.state == .succeeded
        }
        if !download.json {
            Console.out(expected ? "\ndemo finished: every sample behaved as expected (the 404 included)\n"
                                 : "\ndemo finished with unexpected results (see the table above)\n")
        }
        return expected ? .success : .failure
    }
}
