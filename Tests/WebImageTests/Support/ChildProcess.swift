import Foundation

/// Runs a command to its end for a test oracle or fixture (Pillow, `openssl`, Debian's codec
/// tools): one place for the process plumbing. Standard error is discarded.
enum ChildProcess {
    /// Runs `executable` with `arguments` and returns its exit status and standard output.
    static func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                    directory: URL? = nil) throws -> (status: Int32, output: Data) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        if let directory { process.currentDirectoryURL = directory }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Read before waiting: a child filling the pipe would otherwise never exit.
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, data)
    }
}
