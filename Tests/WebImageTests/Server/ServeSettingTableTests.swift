import Foundation
import Testing
import WebImageServer

/// `webimage serve`'s settings are declared once, in ``ServeSetting/all``: the README's and the
/// DocC catalog's settings tables, the binary's flags, and the names the loader reads must all be
/// that list, both ways.
@Suite("webimage serve: the settings table")
struct ServeSettingTableTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    @Test func namesAreDistinct() {
        let names = ServeSetting.all.flatMap { [$0.name] + ($0.formerName.map { [$0] } ?? []) }
        #expect(Set(names).count == names.count)
        #expect(Set(ServeSetting.all.map(\.configKey)).count == ServeSetting.all.count)
    }

    @Test func theREADMEsTableListsEverySetting() throws {
        let listed = try Self.settingsListed(in: "README.md")
        #expect(Self.missing(from: listed) == [], "README.md's settings table lacks these")
    }

    @Test func theCatalogsTableListsEverySettingAndTheOtherTablesOnlySettings() throws {
        let catalog = "Sources/WebImageServer/WebImageServer.docc"
        let listed = try Self.settingsListed(in: "\(catalog)/RunningTheService.md")
        #expect(Self.missing(from: listed) == [], "RunningTheService.md's settings table lacks these")
        // The other articles' tables (the timeouts') repeat some rows; those must agree too.
        let articles = try FileManager.default.contentsOfDirectory(atPath: Self.packageRoot.appendingPathComponent(catalog).path)
        for article in articles where article.hasSuffix(".md") && article != "RunningTheService.md" {
            _ = try Self.settingsListed(in: "\(catalog)/\(article)")
        }
    }

    /// The settings printed on start are named by their config keys; the key file and
    /// presets-only are shown within the signing-key and presets lines, the S3 credentials
    /// (from `AWS_` variables only) are not a setting.
    @Test func theSummaryNamesSettingsByTheirKeys() {
        let labels = Set(ServerConfiguration().summary.split(separator: "\n").map { String($0.prefix { $0 != ":" }) })
        let keys = Set(ServeSetting.all.map(\.configKey))
        #expect(labels.subtracting(keys) == ["s3-credentials"])
        #expect(keys.subtracting(labels) == [ServeSetting.signingKeyFile.configKey, ServeSetting.presetsOnly.configKey])
    }

    /// The flags `webimage serve` parses, as ArgumentParser describes them, are the table's: the
    /// names, whether a flag or an option, repeatable or not, the value's name and the help.
    @Test(.enabled(if: CrashSafetyTests.binary != nil, "the webimage binary is not built"))
    func theCommandsFlagsAreTheTables() throws {
        let process = Process()
        process.executableURL = CrashSafetyTests.binary
        process.arguments = ["serve", "--experimental-dump-help"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let arguments = try JSONDecoder().decode(DumpedHelp.self, from: data).command.arguments
        var byName: [String: DumpedHelp.Argument] = [:]
        for argument in arguments {
            for name in argument.names ?? [] where name.kind == "long" { byName[name.name] = argument }
        }
        var expected: Set<String> = ["help", "version"]
        for setting in ServeSetting.all {
            expected.formUnion(setting.flags.map { String($0.dropFirst(2)) })
            guard let argument = byName[setting.name] else {
                Issue.record("webimage serve has no \(setting.flag)")
                continue
            }
            let isFlag = setting.syntax == .flag || setting.syntax == .invertibleFlag
            #expect(argument.kind == (isFlag ? "flag" : "option"), "\(setting.flag)")
            #expect(argument.isRepeating == (setting.syntax == .repeatableOption), "\(setting.flag)")
            #expect(argument.abstract == setting.help, "\(setting.flag)")
            if !isFlag { #expect(argument.valueName == setting.valueName, "\(setting.flag)") }
            if let former = setting.formerName {
                expected.insert(former)
                #expect(byName[former]?.valueName == setting.valueName, "--\(former)")
            }
        }
        #expect(Set(byName.keys) == expected)
    }

    /// Each setting's environment variable and config key, and a former name's, are read: a
    /// value under it changes the configuration or is refused.
    @Test func everyEnvironmentVariableAndConfigKeyIsRead() async throws {
        #expect(Set(Self.samples.keys) == Set(ServeSetting.all.map(\.name)))
        let baseline = try await ServerConfiguration.resolve(.init(), environment: [:])
        func isRead(_ environment: [String: String]) async -> Bool {
            do { return try await ServerConfiguration.resolve(.init(), environment: environment) != baseline } catch { return true }
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-settings-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        func file(_ key: String, _ json: String) throws -> [String: String] {
            let file = directory.appendingPathComponent("\(key).json")
            try Data(#"{"\#(key)": \#(json)}"#.utf8).write(to: file)
            return [ServerConfiguration.configFileVariable: file.path]
        }
        for setting in ServeSetting.all {
            guard let sample = Self.samples[setting.name] else { continue }
            #expect(await isRead([setting.environmentVariable: sample.environment]), "\(setting.environmentVariable)")
            #expect(await isRead(try file(setting.configKey, sample.file)), "config key \(setting.configKey)")
            if let former = setting.formerName, let variable = setting.formerEnvironmentVariable {
                #expect(await isRead([variable: sample.environment]), "\(variable)")
                #expect(await isRead(try file(former, sample.file)), "config key \(former)")
            }
        }
    }

    /// A value for each setting other than its default, as the environment and as JSON.
    static let samples: [String: (environment: String, file: String)] = [
        "host": ("0.0.0.0", #""0.0.0.0""#), "port": ("9000", "9000"), "cache-dir": ("/tmp/c", #""/tmp/c""#),
        "allowed-source": ("https://a.example/", #"["https://a.example/"]"#), "allow-private-source": ("a.example", #"["a.example"]"#),
        "allow-private-sources": ("true", "true"), "signing-key": ("a-key", #""a-key""#),
        "signing-key-file": ("/nonexistent/keys", #""/nonexistent/keys""#), "signature-migration": ("false", "false"),
        "preset": ("t=w=10", #"{"t": "w=10"}"#), "presets-only": ("true", "true"), "local-root": ("/nonexistent", #""/nonexistent""#),
        "s3-endpoint": ("http://minio:9000", #""http://minio:9000""#), "s3-region": ("eu-west-1", #""eu-west-1""#),
        "result-store": ("s3://results/p", #""s3://results/p""#), "max-source-bytes": ("1000", "1000"), "max-source-pixels": ("1000", "1000"),
        "max-animation-frames": ("3", "3"), "max-result-pixels": ("1000", "1000"), "concurrency": ("3", "3"),
        "cache-control-max-age": ("60", "60"), "render-timeout": ("5", "5"), "client-timeout": ("5", "5"), "shutdown-delay": ("1", "1"),
        "memory-budget-mib": ("64", "64"), "quality": ("jpeg=50", #""jpeg=50""#), "auto-formats": ("webp", #""webp""#),
        "watermark": ("/nonexistent.png", #""/nonexistent.png""#), "dialect": ("thumbor", #"["thumbor"]"#),
        "thumbor-key": ("a-key", #""a-key""#), "thumbor-allow-unsafe": ("false", "false"),
        "otel-endpoint": ("http://collector:4318", #""http://collector:4318""#),
    ]

    static func missing(from listed: Set<String>) -> [String] {
        ServeSetting.all.map(\.name).filter { !listed.contains($0) }
    }

    /// The settings named by the settings tables (those whose first column is `Flag`) of the
    /// Markdown file at `path`, each row checked against the table: its flags and their value
    /// names, its environment variables and config keys when it has those columns, and the
    /// former and fallback names, which it must mention.
    static func settingsListed(in path: String) throws -> Set<String> {
        let text = try String(contentsOf: packageRoot.appendingPathComponent(path), encoding: .utf8)
        var byFlag: [String: ServeSetting] = [:]
        for setting in ServeSetting.all { for flag in setting.flags { byFlag[flag] = setting } }
        var listed: Set<String> = []
        for table in MarkdownTable.all(in: text) where table.header.first?.lowercased() == "flag" {
            let environmentColumn = table.header.firstIndex { $0.lowercased() == "environment" }
            let keyColumn = table.header.firstIndex { $0.lowercased().hasSuffix("key") }
            for row in table.rows {
                let line = row.joined(separator: " | ")
                // A row without a flag is read from the environment only (`AWS_ACCESS_KEY_ID`):
                // not a setting, so not one of the service's own variables either.
                if codeSpans(row[0]).isEmpty {
                    #expect(!row.flatMap(codeSpans).contains { $0.hasPrefix("WEBIMAGE_") }, "\(path): a setting without a flag: \(line)")
                    continue
                }
                var settings: [ServeSetting] = []
                for span in codeSpans(row[0]) {
                    let words = span.split(separator: " ", maxSplits: 1).map(String.init)
                    guard let setting = byFlag[words[0]] else {
                        Issue.record("\(path): \(words[0]) is not in ServeSetting.all: \(line)")
                        continue
                    }
                    if words.count == 2 { #expect(words[1] == setting.valueName, "\(path): \(line)") }
                    if !settings.contains(setting) { settings.append(setting) }
                }
                if let environmentColumn {
                    let variables = codeSpans(row[environmentColumn]).filter { $0.hasPrefix("WEBIMAGE_") }
                    #expect(Set(variables) == Set(settings.map(\.environmentVariable)), "\(path): \(line)")
                }
                if let keyColumn {
                    let keys = codeSpans(row[keyColumn]).filter { $0.allSatisfy { $0.isLowercase || $0.isNumber || $0 == "-" } }
                    #expect(Set(keys) == Set(settings.map(\.configKey)), "\(path): \(line)")
                }
                let mentioned = Set(row.flatMap(codeSpans))
                for setting in settings {
                    for name in setting.fallbackVariables { #expect(mentioned.contains(name), "\(path): \(name) not in \(line)") }
                    guard let former = setting.formerName else { continue }
                    var formerNames = ["--" + former]
                    if environmentColumn != nil, let variable = setting.formerEnvironmentVariable { formerNames.append(variable) }
                    if keyColumn != nil { formerNames.append(former) }
                    for name in formerNames { #expect(mentioned.contains(name), "\(path): \(name) not in \(line)") }
                }
                listed.formUnion(settings.map(\.name))
            }
        }
        return listed
    }

    /// The text between each pair of backticks.
    static func codeSpans(_ cell: String) -> [String] {
        cell.split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
    }

    /// What `--experimental-dump-help` prints, the parts checked.
    struct DumpedHelp: Decodable {
        struct Name: Decodable { var kind: String; var name: String }
        struct Argument: Decodable {
            var kind: String
            var names: [Name]?
            var isRepeating: Bool
            var valueName: String?
            var abstract: String?
        }
        struct Command: Decodable { var arguments: [Argument] }
        var command: Command
    }
}
