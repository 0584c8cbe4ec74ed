/// `imagedl --help`: written like a manual page (NAME, SYNOPSIS, DESCRIPTION, OPTIONS, EXIT STATUS, EXAMPLES).
enum HelpText {
    static let version = "imagedl 0.1.0 (OperationDownloader)"

    static let manual = """
    NAME
        imagedl - download and decode images concurrently, with live progress and terminal previews

    SYNOPSIS
        imagedl URL... [--concurrency N] [--lifo] [--progressive] [--output DIR [--png]]
                       [--thumbnail WxH] [--json] [--preview] [--timeout S] [--max-time S]
                       [--header 'K: V']... [--user U --password P] [--http-cache DIR|URL]...
                       [--retry N] [--input FILE] [--metrics FILE] [--verbose]
                       [--transport curl|urlsession] [--insecure] [--cacert FILE] [--proxy URL]
        imagedl --input FILE [options]
        imagedl decode FILE... [--json] [--rgba OUT [--frame N]] [--keep-color-profile]
        imagedl thumbnail FILE|URL... --size WxH --output DIR [--fill] [--format jpeg|png|webp|avif]
                       [--quality Q] [--concurrency N] [--input FILE] [--json] [download options]
        imagedl --demo [--preview] [--json] [--concurrency N] [--lifo]
        imagedl --help | --version

    DESCRIPTION
        imagedl downloads images with OperationDownloader, the SDWebImage-style downloader of this package:
        one operation per URL, at most N at once, FIFO or LIFO, decoded with libjpeg-turbo, libpng and the
        package's own GIF/BMP decoders. On a terminal every URL gets a live progress bar (bytes, percent,
        rate); in a pipe, or with --json, plain lines are printed instead. A summary table follows: format,
        pixel size, bytes, time, cache hit and error for each URL.

        imagedl decode inspects local files without any network: format (sniffed from the content, never
        from the name), pixel size, frames, loop count, EXIF orientation and decode time. Folders are read
        recursively. A file that is not an image, or is damaged, gives one line naming the problem.

        imagedl thumbnail writes one thumbnail file per input (files or http(s) URLs) into DIR, named after
        the input and never colliding: decoded with shrink-on-load (libjpeg's 1/8 scale for large JPEGs),
        turned upright by its EXIF orientation, resized with Lanczos-3, encoded without metadata. Every
        core works at once (one image per thread). Details: Docs/Processing.md.

        imagedl --demo needs no network: it starts a web server on 127.0.0.1 serving a few bundled sample
        images (a progressive JPEG sent slowly so its passes appear one by one, a PNG, a GIF, a baseline
        JPEG and a missing file that answers 404) and downloads them with progress bars and previews.

    OPTIONS
        --concurrency N     Download at most N URLs at once (1-64; default 6).
        --lifo              Start the most recently queued URL first (default: first in, first out).
        --progressive       Decode while bytes arrive; with --preview, partial images are redrawn.
        --output DIR        Write each downloaded file into DIR (created if needed), named after the URL's
                            last path component with the image's own extension; an existing file is never
                            replaced ("name-2.png", "name-3.png", ...). --json names the exact file.
        --png               With --output: write the decoded image as PNG instead of the original bytes.
        --thumbnail WxH     Decode to fit inside W x H pixels, aspect ratio kept (never enlarged).
        --json              Print one JSON object per URL (or per file with decode) and nothing else;
                            "network" holds the transport's metrics (HTTP version, address, reuse, ...).
        --preview           Draw each image in the terminal with 24-bit colour half-blocks.
        --timeout S         Give up on a download when no byte arrived for S seconds (default 15). An
                            idle timeout, like curl's --speed-time: a slow but steady download is never
                            cut off, however long it takes.
        --max-time S        Give up on a download whose transfer takes longer than S seconds in all
                            (curl's -m; decoding does not count). Default: no limit.
        --header 'K: V'     Send this request header; repeat for several.
        --user U            User name for HTTP Basic authentication (needs --password).
        --password P        Password for HTTP Basic authentication (needs --user).
        --http-cache DIR    Keep an HTTP cache in DIR (created if needed): responses are stored there,
                            fresh ones are used without a request, stale ones are revalidated (304).
                            The summary's cache column says "hit", "stale" or "revalidated" for
                            each image taken from it, and its last line counts them.
        --http-cache redis://[user:password@]host:port[/db]
        --http-cache redis-sentinel://[user:password@]host:port[,host:port...]/mastername[/db]
        --http-cache redis-cluster://[user:password@]host:port[,host:port...]
                            Share the HTTP cache with every process using the same Redis (one server,
                            the primary Sentinel names, or a Cluster): one fetches a URL, the others
                            wait for it and take it from Redis ("hit"); the summary counts the waits.
                            Redis down or slow never fails a download (a warning on stderr, then
                            straight to the server); a Sentinel or Cluster failover is followed.
                            Give --http-cache twice, a folder and a Redis URL, for two tiers (the
                            first given nearest): hits come from the folder without crossing the network,
                            what the folder misses comes from Redis and is copied into it.
        --http-cache-url-file FILE
                            The Redis URL is FILE's first line, so that its password is not on the
                            command line (ps shows it there); with --http-cache DIR, two tiers as
                            above. Without --http-cache, the environment variable OD_REDIS_URL is
                            used when set.
        --http-cache-size BYTES
                            The folder's size limit (K, M or G: 1024-based; default 150M): the least
                            recently used entries go first. Held by every process sharing the folder.
        --retry N           Try a download up to N more times after a failure worth retrying (refused,
                            reset or lost connection, DNS failure, timeout, HTTP 408, 429, 500, 502, 503,
                            504), waiting a random, doubling delay (and at least what Retry-After asks, up to
                            30 s) in between. Default 0.
        --input FILE        Read URLs from FILE, one a line ('-' reads stdin); blank lines and lines starting
                            with '#' are skipped. Read as downloads finish, so millions of lines use little
                            memory; each URL is reported when it ends (a line, or a --json object), then a
                            total. A line that is not an http(s) URL is reported on stderr (exit status 1).
        --transport T       curl (libcurl driven by the package: HTTP/2, TLS control, proxies, metrics;
                            the default where libcurl.so.4 loads) or urlsession (Foundation's URLSession).
        --insecure          Accept any server certificate (self-signed, expired, wrong name). Dangerous:
                            anyone on the path can read and change the images. curl transport only; with
                            urlsession on Linux every https download fails instead.
        --cacert FILE       Trust the certificate authorities in this PEM file instead of the system's
                            (curl transport).
        --proxy URL         Send every request through this proxy (http://host:port, socks5h://...;
                            curl transport). Without it http_proxy/https_proxy/no_proxy are used.
        --metrics FILE      Write the run's metrics to FILE when it ends ('-': stderr), in Prometheus' text
                            format: requests by host and status with their durations, downloads by result
                            and source, HTTP cache lookups, retries, decodes, Redis errors (the names are
                            OpenTelemetry's; see Docs/Observability.md). The summary quotes the median and
                            95th-percentile request time and the HTTP cache hit ratio either way.
        --verbose           Also print the library's debug messages on stderr (retries and why, waits for
                            the decode memory budget or for another process's fetch, Redis coming back).
        --demo              Run the offline demo described above.
        -h, --help          Show this manual.
        --version           Show the version and the codec libraries in use.

      decode
        --json              One JSON object per file with keys file, format, width, height, frames,
                            duration (seconds of one loop, animations only), loop_count (plays,
                            0 forever; animations only), orientation, color,
                            color_detail, icc_profile_bytes, incomplete, error (null where they do not
                            apply). incomplete is true when the data ends early and only part of the
                            image could be decoded.
        --rgba OUT          Write the decoded first frame as raw RGBA8 (width*4 bytes per row, top row
                            first, straight alpha). OUT is a file for one input, a folder for several.
                            Pixels are sRGB: embedded ICC profiles (and PNG gAMA/cHRM) are applied.
        --frame N           With --rgba: write frame N (0-based) of an animation, composited, instead;
                            a frame past the last one is an error (exit 1).
        --keep-color-profile  Dump the pixels in the file's own colour space instead (no conversion).

      thumbnail
        --size WxH          The box each thumbnail fits in (required; N means NxN).
        --output DIR        Where thumbnails go (required; created if needed).
        --fill              Fill the box exactly, cropping the overflow, instead of fitting inside it.
        --format F          jpeg (default), png, webp (needs libwebp7) or avif (needs libavif15
                            with an AV1 encoder).
        --quality Q         1-100 for jpeg, webp and avif (default 80; webp 100 is lossless).
        --concurrency N     Images processed at once (default: one per core).
        --input FILE        More inputs, one file or URL a line ('-' reads standard input).
        --json              One JSON object per input with keys input, file, status, format, width,
                            height, bytes, seconds, error ("file" is the path written).
        Download options (--timeout, --header, --user/--password, --http-cache, ...) apply to URLs.

        Options may appear before or after URLs and files; '--' ends the options. '--name=value' works too.

    EXIT STATUS
        0     Every URL was downloaded and decoded (or every file decoded).
        1     At least one download, decode or write failed; each failure was reported.
        2     The command line could not be understood; nothing was attempted.
        130   Interrupted with Ctrl-C: all downloads were cancelled.

    EXAMPLES
        swift run imagedl --demo
        imagedl --preview --progressive https://example.com/photo.jpg
        imagedl --concurrency 2 --output out --png https://example.com/a.gif https://example.com/b.jpg
        imagedl --json --timeout 5 https://example.com/a.png
        imagedl --http-cache ~/.cache/imagedl https://example.com/a.png
        imagedl --input urls.txt --concurrency 16 --retry 2 --json --output images > results.jsonl
        imagedl decode --json photos/
        imagedl decode --rgba photo.rgba photo.jpg
        imagedl thumbnail photos/*.jpg --size 256x256 --output thumbs

    SEE ALSO
        README.md, Docs/Options.md, Docs/Linux.md in the OperationDownloader repository.

    """
}
