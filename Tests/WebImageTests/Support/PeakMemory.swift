import Foundation

/// Runs a program and reports its peak resident memory as the kernel accounted it for that one
/// process (`ru_maxrss` of the waited child).
///
/// A small Python process starts it and reads the number: a child spawned straight from the test
/// process would start its count from the test process's own peak (Linux carries the old address
/// space's high-water mark across `exec`), hundreds of MB that have nothing to do with the child.
enum PeakMemory {
    static let isAvailable = FileManager.default.isExecutableFile(atPath: PillowOracle.python)

    struct Run {
        var status: Int32
        var output: String
        /// Peak resident set, in KB.
        var peakKB: Int
    }

    static func run(_ executable: URL, _ arguments: [String]) throws -> Run {
        let script = """
            import resource, subprocess, sys
            child = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
            sys.stdout.write("%d %d\\n" % (child.returncode, peak) + child.stdout.decode("utf-8", "replace"))
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: PillowOracle.python)
        process.arguments = ["-c", script, executable.path] + arguments
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let output = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let firstLine = output.prefix { $0 != "\n" }
        let fields = firstLine.split(separator: " ").compactMap { Int($0) }
        guard process.terminationStatus == 0, fields.count == 2 else { throw CocoaError(.fileReadUnknown) }
        return Run(status: Int32(fields[0]), output: String(output.dropFirst(firstLine.count)), peakKB: fields[1])
    }
}
