// AHCDownloadBench: `webimage bench-download`'s harness over AsyncHTTPClient (issue #30), so that
// our HTTP client and AHC download the same URL list the same way, side by side.
//
//   AHCDownloadBench --urls-file F [--concurrency 6] [--mode loader|handlers|manager]
//                    [--client ahc|ours] [--http-version auto|1.1|2] [--ca-file PEM] [--shutdown]
//
// Modes (N = --concurrency):
//   loader    N workers, each awaiting one load's `ImageLoader` event stream after another: the
//             counterpart of `webimage bench-download --loader-only` (AHC: `AHCImageLoader.load`;
//             ours: an `HTTPImageLoader` of its own, so that --http-version and --ca-file apply).
//   handlers  every body handed to a completion handler where it arrives, N at a time, no stream:
//             AHC's delegate API directly, against `ImageDownloader.download(_:progress:completion:)`
//             (`webimage bench-download`'s default). `ImageDownloader` cannot take another loader
//             (it routes http(s) to its own `HTTPImageLoader`), so this is AHC at its cheapest
//             against our downloader, queue and coalescing included.
//   manager   `ImageManager(loader:)` with no cache, decoding every image, N at a time: what
//             `webimage load --no-cache --summary-only` does (ours: through `ImageDownloader`).
// Prints one line like bench-download's: "downloaded K/N files, B bytes, failures F, S s (mode)".
// Like bench-download, the process exits without shutting the client down (its connections die
// with it): HTTPImageLoader.shutdown() closes its connections one after another, each TLS close
// waiting a round trip for the server's close_notify (6 connections over a 50 ms link: 0.3 s),
// where AHC's returned at once. --shutdown shuts down after the timing and prints how long it took.
import Foundation
import Synchronization
import WebImage

struct Arguments {
    var urlsFile = ""
    var concurrency = 6
    var mode = "loader"
    var client = "ahc"
    var httpVersion = AHCImageLoader.Version.auto
    var caFile: String?
    var shutdown = false

    init(_ list: [String]) throws {
        var rest = list[...]
        func value(_ name: String) throws -> String {
            guard let next = rest.popFirst() else { throw Failure("\(name) needs a value") }
            return next
        }
        while let name = rest.popFirst() {
            switch name {
            case "--urls-file": urlsFile = try value(name)
            case "--concurrency":
                guard let n = Int(try value(name)), n > 0 else { throw Failure("--concurrency needs a positive number") }
                concurrency = n
            case "--mode": mode = try value(name)
            case "--client": client = try value(name)
            case "--http-version":
                guard let version = AHCImageLoader.Version(rawValue: try value(name)) else { throw Failure("--http-version is auto, 1.1 or 2") }
                httpVersion = version
            case "--ca-file": caFile = try value(name)
            case "--loader-only": mode = "loader"
            case "--shutdown": shutdown = true
            case "-h", "--help":
                print("usage: AHCDownloadBench --urls-file F [--concurrency N] [--mode loader|handlers|manager] [--client ahc|ours] [--http-version auto|1.1|2] [--ca-file PEM] [--shutdown]")
                exit(0)
            default: throw Failure("unknown argument \(name)")
            }
        }
        guard !urlsFile.isEmpty else { throw Failure("--urls-file is required") }
        guard ["loader", "handlers", "manager"].contains(mode) else { throw Failure("--mode is loader, handlers or manager") }
        guard ["ahc", "ours"].contains(client) else { throw Failure("--client is ahc or ours") }
    }
}

struct Failure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The next URL index to take, shared by the workers.
final class WorkIndex: Sendable {
    private let next = Atomic(0)
    func take() -> Int { next.add(1, ordering: .relaxed).oldValue }
}

/// Counts updated from the event loops.
final class Tally: Sendable {
    let bytes = Atomic(0)
    let failures = Atomic(0)
    let done = Atomic(0)
}

/// One load's body size, set on its event loop.
final class Count: Sendable {
    let value = Atomic(0)
}

/// `workers` tasks taking the next of `count` indices until none is left; `load` gives the body's
/// size, or nil for a failure. Returns the bytes and the failures.
func withWorkers(_ count: Int, workers: Int, _ load: @escaping @Sendable (Int) async -> Int?) async -> (Int, Int) {
    let next = WorkIndex()
    return await withTaskGroup(of: (Int, Int).self) { group in
        for _ in 0..<workers {
            group.addTask {
                var (bytes, failures) = (0, 0)
                while true {
                    let index = next.take()
                    guard index < count else { return (bytes, failures) }
                    if let size = await load(index) { bytes += size } else { failures += 1 }
                }
            }
        }
        return await group.reduce(into: (0, 0)) { $0.0 += $1.0; $0.1 += $1.1 }
    }
}

/// N workers awaiting one loader stream after another (bench-download's `loaderOnly`).
func throughLoader(_ urls: [URL], loader: any ImageLoader, workers: Int) async -> (Int, Int) {
    await withWorkers(urls.count, workers: workers) { index in
        var size: Int?
        do {
            for try await event in loader.load(ImageLoadRequest(url: urls[index])) {
                if case .completed(let data, _) = event { size = data.count }
            }
        } catch {}
        return size
    }
}

/// AHC's delegate API with completion handlers, at most `workers` at once: each completion starts the next.
func ahcHandlers(_ urls: [URL], loader: AHCImageLoader, workers: Int) async -> (Int, Int) {
    guard !urls.isEmpty else { return (0, 0) }
    let tally = Tally()
    let next = WorkIndex()
    await withCheckedContinuation { (finished: CheckedContinuation<Void, Never>) in
        @Sendable func startNext() {
            let index = next.take()
            guard index < urls.count else { return }
            let body = Count()
            loader.start(ImageLoadRequest(url: urls[index]), sink: { event in
                if case .completed(let data, _) = event { body.value.store(data.count, ordering: .relaxed) }
            }) { result in
                if case .success = result {
                    tally.bytes.add(body.value.load(ordering: .relaxed), ordering: .relaxed)
                } else {
                    tally.failures.add(1, ordering: .relaxed)
                }
                if tally.done.add(1, ordering: .acquiringAndReleasing).newValue == urls.count {
                    finished.resume()
                } else {
                    startNext()
                }
            }
        }
        for _ in 0..<min(workers, urls.count) { startNext() }
    }
    return (tally.bytes.load(ordering: .relaxed), tally.failures.load(ordering: .relaxed))
}

/// `webimage bench-download`'s default: every URL handed to the downloader at once, bodies taken in handlers.
func downloaderHandlers(_ urls: [URL], downloader: ImageDownloader) async -> (Int, Int) {
    guard !urls.isEmpty else { return (0, 0) }
    let tally = Tally()
    await withCheckedContinuation { (finished: CheckedContinuation<Void, Never>) in
        for url in urls {
            downloader.download(ImageLoadRequest(url: url)) { result in
                if case .success(.data(let data, _)) = result {
                    tally.bytes.add(data.count, ordering: .relaxed)
                } else {
                    tally.failures.add(1, ordering: .relaxed)
                }
                if tally.done.add(1, ordering: .acquiringAndReleasing).newValue == urls.count { finished.resume() }
            }
        }
    }
    return (tally.bytes.load(ordering: .relaxed), tally.failures.load(ordering: .relaxed))
}

/// `webimage load --no-cache --summary-only`: the manager with `loader`, decoding, N at a time.
func throughManager(_ urls: [URL], loader: any ImageLoader, workers: Int) async -> (Int, Int) {
    let cacheDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("ahc-bench-\(getpid())")
    defer { try? FileManager.default.removeItem(at: cacheDirectory) }
    let cache = ImageCache(diskCache: DiskCache(configuration: DiskCacheConfiguration(directory: cacheDirectory)))
    let manager = ImageManager(cache: cache, loader: loader)
    var context = ImageLoadContext()
    context.cacheKeyFilter = { _ in nil }
    let shared = context
    return await withWorkers(urls.count, workers: workers) { index in
        try? await manager.loadImage(with: urls[index], context: shared).data?.count ?? 0
    }
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

func run() async throws -> Int32 {
    let arguments = try Arguments(Array(CommandLine.arguments.dropFirst()))
    let text = try String(contentsOfFile: arguments.urlsFile, encoding: .utf8)
    let urls = text.split(whereSeparator: \.isNewline).compactMap { URL(string: String($0)) }
    let pem = try arguments.caFile.map { try String(contentsOfFile: $0, encoding: .utf8) }
    let n = arguments.concurrency
    let start = ContinuousClock.now
    let bytes: Int, failures: Int
    var shutdown: (@Sendable () async throws -> Void)?
    if arguments.client == "ahc" {
        let loader = try AHCImageLoader(version: arguments.httpVersion, trustedCertificatesPEM: pem)
        shutdown = { try await loader.shutdown() }
        switch arguments.mode {
        case "handlers": (bytes, failures) = await ahcHandlers(urls, loader: loader, workers: n)
        case "manager": (bytes, failures) = await throughManager(urls, loader: loader, workers: n)
        default: (bytes, failures) = await throughLoader(urls, loader: loader, workers: n)
        }
    } else {
        let version: ImageDownloader.HTTPVersion = switch arguments.httpVersion {
        case .auto: .auto
        case .http1_1: .http1_1
        case .http2: .http2
        }
        if arguments.mode == "loader" {
            var settings = HTTPImageLoader.Configuration(trustedCertificatesPEM: pem.map { [$0] } ?? [])
            settings.httpVersion = version
            let loader = HTTPImageLoader(configuration: settings)
            shutdown = { try await loader.shutdown() }
            (bytes, failures) = await throughLoader(urls, loader: loader, workers: n)
        } else {
            var configuration = ImageDownloaderConfiguration(maxConcurrentDownloads: n, trustedCertificatesPEM: pem.map { [$0] } ?? [])
            configuration.httpVersion = version
            let downloader = ImageDownloader(configuration: configuration)
            shutdown = { try await downloader.shutdown() }
            (bytes, failures) = arguments.mode == "handlers"
                ? await downloaderHandlers(urls, downloader: downloader)
                : await throughManager(urls, loader: downloader, workers: n)
        }
    }
    let elapsed = ContinuousClock.now - start
    var closing = ""
    if arguments.shutdown, let shutdown {
        let closeStart = ContinuousClock.now
        try? await shutdown()
        closing = "; shutdown " + String(format: "%.3f", seconds(ContinuousClock.now - closeStart)) + " s"
    }
    let label = arguments.client == "ahc" ? "AsyncHTTPClient" : "ours"
    print("downloaded \(urls.count - failures)/\(urls.count) files, \(bytes) bytes, failures \(failures), "
          + String(format: "%.3f", seconds(elapsed)) + " s (\(label) \(arguments.mode)\(closing))")
    return failures > 0 ? 1 : 0
}

do {
    exit(try await run())
} catch {
    FileHandle.standardError.write(Data("AHCDownloadBench: \(error)\n".utf8))
    exit(2)
}
