import FuzzSupport
import WebImage

runFuzzer { data in fuzzDecode(data, with: WebPCoder()) }
