import FuzzSupport
import WebImage

// Every input through every registered decoder (full and thumbnail decodes), plus the JPEG
// internals: the target CI runs for a minute on every change.
runFuzzer { data in
    let coders = ImageCodersManager.shared
    _ = try? coders.decode(data, options: fuzzOptions())
    _ = try? coders.decode(data, options: fuzzOptions(thumbnail: true))
    fuzzJPEGInternals(data)
}
