import Foundation
import FuzzSupport
@testable import WebImageServer

// The service's query and preset parsers, whose input is anyone's: a request's query string, and
// the operator's `--preset NAME=QUERY` definitions. Each input is UTF-8 text (invalid bytes
// repaired); its lines but the last are preset definitions, the last line is the query. Every
// parse must return or throw ServiceError, never trap; a query accepted with `--presets-only`
// must parse the same without it (that flag only refuses parameters).
func parsed(_ body: () throws -> ImageParameters) -> ImageParameters? {
    do {
        return try body()
    } catch is ServiceError {
        return nil
    } catch {
        fatalError("an error that is not a ServiceError: \(error)")
    }
}

runFuzzer { data in
    var lines = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    let query = lines.removeLast()
    var definitions: [String: String] = [:]
    for line in lines {
        do {
            let (name, preset) = try ImagePresets.definition(line)
            definitions[name] = preset
        } catch is ServiceError {
            continue
        } catch {
            fatalError("an error that is not a ServiceError: \(error)")
        }
    }
    let presets: ImagePresets
    do {
        presets = try ImagePresets(definitions)
    } catch is ServiceError {
        presets = ImagePresets()
    } catch {
        fatalError("an error that is not a ServiceError: \(error)")
    }
    let open = parsed { try ImageParameters(query: query, presets: presets, presetsOnly: false) }
    let strict = parsed { try ImageParameters(query: query, presets: presets, presetsOnly: true) }
    if let strict {
        guard strict == open else { fatalError("--presets-only changed a query it accepted: \(query)") }
        _ = strict.renderKey
    }
    _ = open?.renderKey
}
