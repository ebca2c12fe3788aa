import Foundation
import FuzzSupport
@testable import WebImageServer

// The service's query and preset parsers, whose input is anyone's: a request's query string, and
// the operator's `--preset NAME=QUERY` definitions. Each input is UTF-8 text (invalid bytes
// repaired); its lines but the last are preset definitions, the last line is the query. Every
// parse must return or throw ServiceError, never trap; a query accepted with `--presets-only`
// must parse the same without it (that flag only refuses parameters).
//
// The last line is also a request path below a `--dialect` mount (#45), parsed by thumbor's and
// imgproxy's grammars, each without a key (anything unsigned goes through) and with one (the
// signature checks), into the same request value.
func parsed(_ body: () throws -> ImageParameters) -> ImageParameters? {
    do {
        return try body()
    } catch is ServiceError {
        return nil
    } catch {
        fatalError("an error that is not a ServiceError: \(error)")
    }
}

/// The dialects' parsers as `--dialect` mounts them: without keys and with keys.
let dialects: [any URLDialect] = {
    var open = ServerConfiguration()
    open.thumborAllowUnsafe = true
    var keyed = ServerConfiguration()
    keyed.thumborKey = "fuzz-thumbor-key"
    keyed.thumborAllowUnsafe = true
    // imgproxy's with a key and salt (signatures checked, truncated to 8 bytes) and a preset;
    // without, any signature goes through to the option grammar.
    keyed.imgproxy.keys = ["943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881"]
    keyed.imgproxy.salts = ["520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5"]
    keyed.imgproxy.signatureSize = 8
    keyed.imgproxy.presets = ["thumb=rs:fill:100:100/f:webp", "loop=pr:loop/w:7"]
    do {
        return [try ThumborDialect(configuration: open), try ThumborDialect(configuration: keyed),
                try ImgproxyDialect(configuration: open), try ImgproxyDialect(configuration: keyed)]
    } catch {
        fatalError("the dialects' set-up failed: \(error)")
    }
}()

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
    for dialect in dialects {
        guard let request = try? dialect.request(path: Substring(query), query: "") else {
            _ = parsed { try dialect.request(path: Substring(query), query: "").parameters }
            continue
        }
        _ = request.parameters.renderKey
        // meta/'s arithmetic on a source size taken from the input's first bytes.
        if case .thumborMeta(let meta, _) = request.answer {
            let bytes = Array(data.prefix(4)) + [1, 1, 1, 1]
            _ = meta.describe(width: 1 + Int(bytes[0]) << 8 + Int(bytes[1]), height: 1 + Int(bytes[2]) << 8 + Int(bytes[3]))
        }
    }
}
