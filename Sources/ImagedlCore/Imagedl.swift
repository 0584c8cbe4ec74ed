import Decoding
import Foundation

/// The `imagedl` program: parses the arguments and runs the command. `main.swift` only calls `run`.
public enum Imagedl {
    /// Runs `imagedl` with `arguments` (without the program name) and returns the exit status.
    public static func run(arguments: [String]) -> ExitCode {
        let command: Command
        do {
            command = try ArgumentParser.parse(arguments)
        } catch {
            Console.err("imagedl: \(error.message)\nTry 'imagedl --help' for the options.\n")
            return .usage
        }
        switch command {
        case .help:
            Console.out(HelpText.manual)
            return .success
        case .version:
            Console.out("\(HelpText.version)\n\(CodecLibraries.jpeg), \(CodecLibraries.png)\n")
            return .success
        case .decode(let options):
            let command = DecodeCommand(options: options, emit: { Console.out($0 + "\n") },
                                        emitError: { Console.err($0 + "\n") })
            return command.run()
        case .thumbnail(let options):
            return ThumbnailCommand(options: options).run()
        case .download(let options):
            return DownloadCommand(options: options).run()
        case .demo(let options):
            return DemoCommand(options: options).run()
        }
    }
}
