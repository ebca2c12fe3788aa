import Foundation

/// Runs a command to its end for a test (the `webimage` binary, Chromium, Pillow, `openssl`,
/// Debian's codec tools): one place for the process plumbing.
enum ChildProcess {
    /// What one run printed, and how it ended.
    struct Run: Sendable {
        var status: Int32
        var stdout: Data
        var stderr: String
    }

    /// Runs `executable` with `arguments` (standard input empty) and returns its exit status and
    /// output, waiting on a thread of its own: the caller's cooperative thread stays free for the
    /// test's other tasks (a loopback server, a timeout) while the child runs.
    static func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                    directory: URL? = nil) async throws -> Run {
        try await onOwnThread { try runBlocking(executable, arguments, environment: environment, directory: directory) }
    }

    /// ``run(_:_:environment:directory:)`` on the calling thread, for the callers that cannot
    /// wait (a trait's condition, a static property, the certificate helpers the loader suites
    /// call synchronously): it blocks that thread, a cooperative one in an async test, until the
    /// child has ended.
    static func runBlocking(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                            directory: URL? = nil) throws -> Run {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        if let directory { process.currentDirectoryURL = directory }
        let output = Pipe()
        // stderr goes to a file, so a chatty child never blocks on a pipe nobody reads.
        let errorURL = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-child-\(UUID().uuidString).err")
        _ = FileManager.default.createFile(atPath: errorURL.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: errorURL) }
        let errorFile = try FileHandle(forWritingTo: errorURL)
        process.standardOutput = output
        process.standardError = errorFile
        process.standardInput = FileHandle.nullDevice
        try process.run()
        try errorFile.close()
        // Read before waiting: a child filling the pipe would otherwise never exit.
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let errorText = String(decoding: (try? Data(contentsOf: errorURL)) ?? Data(), as: UTF8.self)
        return Run(status: process.terminationStatus, stdout: data, stderr: errorText)
    }
}

extension Process {
    /// Returns once the process has ended, waiting on a thread of its own (not a cooperative one).
    func exited() async {
        await onOwnThread { self.waitUntilExit() }
    }
}

/// Runs `body`, which blocks (a read to the end of a pipe, a wait for a child), on a new thread
/// and returns its result: blocked, it would hold one of the few cooperative threads (two on a
/// two-core machine) or one of dispatch's global workers, which other tests' tasks need.
func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result(catching: body)) }.start()
    }
}

/// ``onOwnThread(_:)`` for a body that cannot fail.
func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: body()) }.start()
    }
}
