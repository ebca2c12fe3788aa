#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Testing
import WebImage
import WebImageServer

/// `webimage serve`'s settings: flags over environment over config file over defaults.
@Suite("webimage serve: configuration")
struct ServerConfigurationTests {
    @Test func defaults() async throws {
        let configuration = try await ServerConfiguration.resolve(.init(), environment: [:])
        #expect(configuration == ServerConfiguration())
        #expect(configuration.host == "127.0.0.1" && configuration.port == 8080 && configuration.cacheControlMaxAge == 86_400)
    }

    @Test func flagsOverEnvironmentOverFile() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-serve-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data("""
        {"port": 9001, "concurrency": 7, "cache-dir": "/tmp/from-file", "allow-source": ["a.example", "b.example:8080"],
         "max-source-pixels": 1000, "allow-private-sources": true, "cache-control-max-age": 60}
        """.utf8).write(to: file)
        let environment = [
            ServerConfiguration.configFileVariable: file.path,
            "WEBIMAGE_CONCURRENCY": "9",
            "WEBIMAGE_SIGNING_KEY": "env-key",
            "WEBIMAGE_MAX_SOURCE_BYTES": "12345",
            "WEBIMAGE_HOST": "0.0.0.0",
        ]
        var flags = ServerConfiguration.Flags()
        flags.host = "127.0.0.2"
        flags.maxSourcePixels = 2000
        let configuration = try await ServerConfiguration.resolve(flags, environment: environment)
        #expect(configuration.host == "127.0.0.2")            // flag
        #expect(configuration.maxSourcePixels == 2000)        // flag over file
        #expect(configuration.concurrency == 9)               // environment over file
        #expect(configuration.signingKey == "env-key")
        #expect(configuration.maxSourceBytes == 12345)
        #expect(configuration.port == 9001)                   // file
        #expect(configuration.cacheDirectory == "/tmp/from-file")
        #expect(configuration.allowedSources == ["a.example", "b.example:8080"])
        #expect(configuration.allowPrivateSources)
        #expect(configuration.cacheControlMaxAge == 60)
        // Printed on start, the key hidden.
        #expect(configuration.summary.contains("concurrency: 9"))
        #expect(configuration.summary.contains("signing-key: (set)") && !configuration.summary.contains("env-key"))
    }

    @Test func environmentListsAndRanges() async throws {
        let configuration = try await ServerConfiguration.resolve(.init(), environment: ["WEBIMAGE_ALLOW_SOURCE": "x.example,y.example:81"])
        #expect(configuration.allowedSources == ["x.example", "y.example:81"])
        var flags = ServerConfiguration.Flags()
        flags.concurrency = 0
        await #expect(throws: ServiceError.self) { try await ServerConfiguration.resolve(flags, environment: [:]) }
        flags = .init()
        flags.allowedSources = ["bad:port"]
        await #expect(throws: ServiceError.self) { try await ServerConfiguration.resolve(flags, environment: [:]) }
    }

    @Test func memoryBudgetFromFlagEnvironmentOrFileBoundsTheCacheTheRendersAndAnimations() async throws {
        let defaults = try await ServerConfiguration.resolve(.init(), environment: [:])
        #expect(defaults.memoryBudgetBytes == 1 << 30 && defaults.memoryCacheBytes == 128 << 20)
        #expect(defaults.renderBudgetBytes == 896 << 20 && defaults.animationByteLimit == 256 << 20)
        #expect(defaults.summary.contains("memory-budget-mib: 1024 (memory cache 128 MiB, renders 896 MiB, animation frames 256 MiB)"))

        let file = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-serve-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(#"{"memory-budget-mib": 200}"#.utf8).write(to: file)
        let fromFile = try await ServerConfiguration.resolve(.init(), environment: [ServerConfiguration.configFileVariable: file.path])
        #expect(fromFile.memoryBudgetBytes == 200 << 20 && fromFile.memoryCacheBytes == 50 << 20)
        #expect(fromFile.renderBudgetBytes == 150 << 20 && fromFile.animationByteLimit == 75 << 20)
        let fromEnvironment = try await ServerConfiguration.resolve(.init(), environment: [
            ServerConfiguration.configFileVariable: file.path, "WEBIMAGE_MEMORY_BUDGET_MIB": "96"])
        #expect(fromEnvironment.memoryBudgetBytes == 96 << 20)
        var flags = ServerConfiguration.Flags()
        flags.memoryBudgetMiB = 64
        #expect(try await ServerConfiguration.resolve(flags, environment: ["WEBIMAGE_MEMORY_BUDGET_MIB": "96"]).memoryBudgetBytes == 64 << 20)
        for outOfRange in [0, 31, -5, Int.max] {
            flags.memoryBudgetMiB = outOfRange
            await #expect(throws: ServiceError.self, "\(outOfRange)") { try await ServerConfiguration.resolve(flags, environment: [:]) }
        }
    }

    /// A container's limit, or a systemd unit's `MemoryMax=`, sizes the default budget (issue #29).
    @Test func theDefaultBudgetFollowsTheControlGroupsMemoryLimit() async throws {
        let cgroup = try CgroupMemoryTests.FakeCgroup(membership: "0::/system.slice/webimage.service\n")
        try cgroup.write("max\n", to: "system.slice/memory.max")
        try cgroup.write("536870912\n", to: "system.slice/webimage.service/memory.max")
        #expect(ServerConfiguration.defaultMemoryBudgetMiB(memory: cgroup.memory) == 384)
        let resolved = try await ServerConfiguration.resolve(.init(), environment: [:], memory: cgroup.memory)
        #expect(resolved.memoryBudgetBytes == 384 << 20)
        #expect(resolved.summary.contains("memory-budget-mib: 384 "))
        // A flag still wins; a tiny limit still leaves the least budget that works.
        var flags = ServerConfiguration.Flags()
        flags.memoryBudgetMiB = 100
        #expect(try await ServerConfiguration.resolve(flags, environment: [:], memory: cgroup.memory).memoryBudgetBytes == 100 << 20)
        try cgroup.write("20971520\n", to: "system.slice/webimage.service/memory.max")
        #expect(ServerConfiguration.defaultMemoryBudgetMiB(memory: cgroup.memory) == ServerConfiguration.minimumMemoryBudgetMiB)
        // No limit, or one above 1365 MiB: the documented 1024.
        try cgroup.write("max\n", to: "system.slice/webimage.service/memory.max")
        #expect(ServerConfiguration.defaultMemoryBudgetMiB(memory: cgroup.memory) == 1024)
        try cgroup.write("8589934592\n", to: "system.slice/webimage.service/memory.max")
        #expect(ServerConfiguration.defaultMemoryBudgetMiB(memory: cgroup.memory) == 1024)
    }
}
