import FuzzSupport
@testable import WebImage

runFuzzer { data in
    fuzzDecode(data, with: JPEGCoder())
    fuzzJPEGInternals(data)
}
