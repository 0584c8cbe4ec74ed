import ImagedlCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

exit(Imagedl.run(arguments: Array(CommandLine.arguments.dropFirst())).rawValue)
