import Foundation
import Testing
import WebImageTestSupport

/// The PyPI `imgproxy` package (1.0.0) as the `--dialect imgproxy` tests' URL builder: its
/// `ImgProxy` class makes the signed (`key`, `salt`) and unsigned (`insecure`) URLs with a base64
/// source that applications already send. It comes from the virtualenv `scripts/test.sh` makes
/// under `.build/` (`WEBIMAGE_IMGPROXY_PYTHON`); without it the suite is skipped, visibly.
enum ImgproxyReference {
    /// The key and salt of imgproxy's own examples, on both sides.
    static let key = "943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881"
    static let salt = "520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5"

    /// The virtualenv's python: `WEBIMAGE_IMGPROXY_PYTHON`, else `.build/imgproxy-venv` beside the package.
    static let python = ReferenceVirtualenv.python(variable: "WEBIMAGE_IMGPROXY_PYTHON", directory: "imgproxy-venv")

    /// Whether the package imports, at 1.0.0.
    static let available: Bool = python.map {
        (try? ChildProcess.runBlocking($0, ["-c", "import imgproxy; assert imgproxy.__version__ == '1.0.0'"]).status) == 0
    } ?? false

    /// The paths `ImgProxy(**arguments)(*advanced)` makes for each dictionary (`"advanced"`: the
    /// extra options; `"signed": false` for an `insecure` one). With `"plain": true` the base64
    /// source is swapped for `plain/URL@EXT`, signed as the package signs (the package makes
    /// base64 sources only).
    static func urls(_ cases: [[String: Any]]) async throws -> [String] {
        let script = """
        import sys, json, base64, hmac, hashlib, urllib.parse
        from imgproxy import ImgProxy
        key, salt = sys.argv[1], sys.argv[2]
        paths = []
        for case in json.loads(sys.argv[3]):
            advanced = case.pop("advanced", [])
            signed = case.pop("signed", True)
            plain = case.pop("plain", False)
            if signed and not plain:
                case.update(key=key, salt=salt)
            path = ImgProxy(**case)(*advanced)
            if plain:
                options = path.split("/")[2:-1]
                source = "plain/" + urllib.parse.quote(case["image_url"], safe=":/") + ("@" + case["extension"] if case.get("extension") else "")
                path = "/" + "/".join(options + [source])
                signature = "insecure"
                if signed:
                    digest = hmac.new(bytes.fromhex(key), bytes.fromhex(salt) + path.encode(), hashlib.sha256).digest()
                    signature = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
                path = "/" + signature + path
            paths.append(path)
        print(json.dumps(paths))
        """
        let input = String(decoding: try JSONSerialization.data(withJSONObject: cases), as: UTF8.self)
        let run = try await ChildProcess.run(try #require(python), ["-c", script, key, salt, input])
        try #require(run.status == 0, "imgproxy (PyPI): \(run.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: run.stdout) as? [String])
    }
}
