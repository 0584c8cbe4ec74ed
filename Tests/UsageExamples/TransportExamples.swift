// The examples of Docs/Usage.md, "Choosing a transport" (see AsyncExamples.swift for how the doc quotes them).
import Foundation
import OperationDownloader

// snippet: transport
/// The default transport: libcurl on Linux where it is installed (`apt-get install libcurl4`), else URLSession.
/// Both run the same downloader; curl adds HTTP/2 multiplexing, TLS pinning, proxies, IPv6 literals and
/// connection metrics, and costs less CPU per download than URLSession on Linux.
public func makeDownloader(connectionsPerHost: Int) -> ImageDownloader {
    var configuration = ImageDownloaderConfiguration()
    // What a configuration that names no transport gets; set `.urlSession` to choose URLSession.
    configuration.transport = .platformDefault
    // Also the number of connections curl opens to one host at once: keep it within what the server
    // accepts (see "The accept-queue trap" in Docs/Transports.md).
    configuration.maxConcurrentDownloads = connectionsPerHost
    return ImageDownloader(configuration: configuration)
}
// end snippet
