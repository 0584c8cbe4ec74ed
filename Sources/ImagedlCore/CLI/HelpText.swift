/// `imagedl --help`: written like a manual page (NAME, SYNOPSIS, DESCRIPTION, OPTIONS, EXIT STATUS, EXAMPLES).
enum HelpText {
    static let version = "imagedl 0.1.0 (OperationDownloader)"

    static let manual = """
    NAME
        imagedl - download and decode images concurrently, with live progress and terminal previews

    SYNOPSIS
        imagedl URL... [--concurrency N] [--lifo] [--progressive] [--output DIR [--png]]
                       [--thumbnail WxH] [--json] [--preview] [--timeout S] [--header 'K: V']...
                       [--user U --password P] [--http-cache DIR]
        imagedl decode FILE... [--json] [--rgba OUT]
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

        imagedl --demo needs no network: it starts a web server on 127.0.0.1 serving a few bundled sample
        images (a progressive JPEG sent slowly so its passes appear one by one, a PNG, a GIF, a baseline
        JPEG and a missing file that answers 404) and downloads them with progress bars and previews.

    OPTIONS
        --concurrency N     Download at most N URLs at once (1-64; default 6).
        --lifo              Start the most recently queued URL first (default: first in, first out).
        --progressive       Decode while bytes arrive; with --preview, partial images are redrawn.
        --output DIR        Write each downloaded file into DIR (created if needed), named after the URL.
        --png               With --output: write the decoded image as PNG instead of the original bytes.
        --thumbnail WxH     Decode to fit inside W x H pixels, aspect ratio kept (never enlarged).
        --json              Print one JSON object per URL (or per file with decode) and nothing else.
        --preview           Draw each image in the terminal with 24-bit colour half-blocks.
        --timeout S         Give up on a download after S seconds (default 15).
        --header 'K: V'     Send this request header; repeat for several.
        --user U            User name for HTTP Basic authentication (needs --password).
        --password P        Password for HTTP Basic authentication (needs --user).
        --http-cache DIR    Keep an HTTP cache in DIR (created if needed): responses are stored there,
                            fresh ones are used without a request, stale ones are revalidated (304).
                            The summary's cache column says "hit", "stale" or "revalidated" for
                            each image taken from it, and its last line counts them.
        --demo              Run the offline demo described above.
        -h, --help          Show this manual.
        --version           Show the version and the codec libraries in use.

      decode
        --json              One JSON object per file with keys file, format, width, height, frames,
                            orientation, error (null where they do not apply).
        --rgba OUT          Write the decoded first frame as raw RGBA8 (width*4 bytes per row, top row
                            first, straight alpha). OUT is a file for one input, a folder for several.

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
        imagedl decode --json photos/
        imagedl decode --rgba photo.rgba photo.jpg

    SEE ALSO
        README.md, Docs/Options.md, Docs/Linux.md in the OperationDownloader repository.

    """
}
