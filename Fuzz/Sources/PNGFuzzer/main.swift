import FuzzSupport
@testable import WebImage

runFuzzer { data in fuzzDecode(data, with: PNGCoder()) }
