import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
import WebImageTestSupport

/// thumbor 7.8 (PyPI) as the `--dialect thumbor` tests' reference: libthumbor's `CryptoURL`
/// builds the URLs, thumbor itself (PIL engine, no storage) answers them. Both come from the
/// virtualenv `scripts/test.sh` makes under `.build/` (`WEBIMAGE_THUMBOR_PYTHON`); without it the
/// suites are skipped, visibly.
enum ThumborReference {
    /// The key the tests sign with, on both sides.
    static let key = "MY_SECURE_KEY"

    /// The virtualenv's python: `WEBIMAGE_THUMBOR_PYTHON`, else `.build/thumbor-venv` beside the package.
    static let python = ReferenceVirtualenv.python(variable: "WEBIMAGE_THUMBOR_PYTHON", directory: "thumbor-venv")

    /// Whether thumbor 7.8 and libthumbor import.
    static let available: Bool = python.map {
        (try? ChildProcess.runBlocking($0, ["-c", "import thumbor, libthumbor; assert thumbor.__version__ == '7.8.0'"]).status) == 0
    } ?? false

    /// The paths (with their leading `/`) libthumbor's `CryptoURL(key).generate(**options)` makes
    /// for each options dictionary (`"unsafe": true` for an unsigned one).
    static func urls(_ options: [[String: Any]], key: String = key) async throws -> [String] {
        let script = """
        import sys, json
        from libthumbor import CryptoURL
        crypto = CryptoURL(key=sys.argv[1])
        # generate() starts a signed path with '/', an unsafe one without.
        print(json.dumps(["/" + crypto.generate(**options).lstrip("/") for options in json.loads(sys.argv[2])]))
        """
        let input = String(decoding: try JSONSerialization.data(withJSONObject: options), as: UTF8.self)
        let run = try await ChildProcess.run(try #require(python), ["-c", script, key, input])
        try #require(run.status == 0, "libthumbor: \(run.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: run.stdout) as? [String])
    }

    /// thumbor itself on a free loopback port: PIL engine, the HTTP loader, no storage, no result
    /// storage, unsafe URLs allowed, signed with ``key``, WebP when `Accept` allows it.
    final class Server: Sendable {
        let child: WatchedProcess
        let port: Int
        private let directory: TemporaryDirectory

        static func start() async throws -> Server {
            let directory = try TemporaryDirectory()
            let configuration = directory.url.appendingPathComponent("thumbor.conf")
            try """
            ENGINE = 'thumbor.engines.pil'
            LOADER = 'thumbor.loaders.http_loader'
            STORAGE = 'thumbor.storages.no_storage'
            RESULT_STORAGE = None
            SECURITY_KEY = '\(key)'
            ALLOW_UNSAFE_URL = True
            AUTO_WEBP = True
            RESPECT_ORIENTATION = True
            QUALITY = 80
            DETECTORS = []
            """.write(to: configuration, atomically: true, encoding: .utf8)
            let port = try ExternalTool.freePort()
            let python = try #require(ThumborReference.python)
            let thumbor = URL(fileURLWithPath: python).deletingLastPathComponent().appendingPathComponent("thumbor").path
            let child = try await WatchedProcess.start(URL(fileURLWithPath: thumbor),
                                                       ["--ip", "127.0.0.1", "--port", String(port), "--conf", configuration.path, "-l", "debug"],
                                                       watching: .both) { $0.contains("thumbor starting at") ? "" : nil }
            return Server(child: child, port: port, directory: directory)
        }

        private init(child: WatchedProcess, port: Int, directory: TemporaryDirectory) {
            self.child = child
            self.port = port
            self.directory = directory
        }

        func stop() async { await child.stop(signal: SIGKILL) }
    }
}
