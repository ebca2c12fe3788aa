#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `--preset NAME=QUERY`: named sets of output options (`thumb` → `w=300&h=300&fit=cover&q=75`)
/// a request applies with `preset=NAME[,NAME...]`, left to right, before its own parameters.
///
/// Every definition is checked when the service starts, with the same rules as a request's
/// options, so a bad preset fails the start rather than every request that names it. A preset
/// sets options only (``ImageParameters/optionNames``): never `url`, `sig` or another preset.
/// The output cache key and the ETag are made from the effective options, so two presets with
/// different contents never share an entry, and redefining a preset changes the key.
public struct ImagePresets: Sendable, Hashable {
    /// Each preset's options, decoded, by name.
    private let definitions: [String: [String: String]]

    /// No presets.
    public init() {
        definitions = [:]
    }

    /// The presets `definitions` (name → raw query) define.
    /// - Throws: ``ServiceError`` naming the preset and what is wrong with it.
    public init(_ definitions: [String: String]) throws {
        var parsed: [String: [String: String]] = [:]
        for (name, query) in definitions {
            func bad(_ why: String) -> ServiceError { .badParameter("bad preset '\(name)': \(why)") }
            guard !name.isEmpty, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else {
                throw bad("a name is letters, digits, '-' and '_'")
            }
            var options: [String: String] = [:]
            for (option, value) in ImageParameters.pairs(of: query) {
                guard ImageParameters.optionNames.contains(option) else {
                    throw bad("'\(option)' cannot be preset (only \(ImageParameters.optionNames.sorted().joined(separator: ", ")))")
                }
                guard options[option] == nil else { throw bad("'\(option)' given twice") }
                options[option] = value
            }
            guard !options.isEmpty else { throw bad("it sets nothing") }
            do {
                _ = try ImageParameters.Options(options)
            } catch let error as ServiceError {
                throw bad(error.message)
            }
            parsed[name] = options
        }
        self.definitions = parsed
    }

    /// Whether no preset is defined.
    public var isEmpty: Bool { definitions.isEmpty }

    /// The options of the presets `list` names (`thumb,webp`), later ones over earlier ones.
    /// - Throws: ``ServiceError`` 400 for an empty or unknown name.
    func options(named list: String) throws -> [String: String] {
        var options: [String: String] = [:]
        for name in list.split(separator: ",", omittingEmptySubsequences: false) {
            guard !name.isEmpty else { throw ServiceError.badParameter("'preset' has an empty name") }
            guard let preset = definitions[String(name)] else { throw ServiceError.badParameter("unknown preset '\(name)'") }
            options.merge(preset) { _, later in later }
        }
        return options
    }

    /// `NAME=QUERY`, as `--preset` takes it, split at the first `=`.
    /// - Throws: ``ServiceError`` when there is no `=`.
    public static func definition(_ text: String) throws -> (name: String, query: String) {
        guard let equals = text.firstIndex(of: "=") else {
            throw ServiceError.badParameter("bad preset '\(text)': expected NAME=QUERY")
        }
        return (String(text[..<equals]), String(text[text.index(after: equals)...]))
    }
}

/// The config file's `presets` object (name → query). The configuration readers look values up
/// by key and cannot list an object's names, so this one key is read from the file directly.
enum ConfigFilePresets {
    /// The presets in the JSON file at `path`; none when it has no `presets` key.
    /// - Throws: ``ServiceError`` when `presets` is not an object of strings.
    static func read(from path: String) throws -> [String: String] {
        struct File: Decodable { var presets: [String: String]? }
        do {
            return try JSONDecoder().decode(File.self, from: Data(contentsOf: URL(fileURLWithPath: path))).presets ?? [:]
        } catch {
            throw ServiceError.badParameter("config file \(path): 'presets' must be an object of name to query strings")
        }
    }
}
