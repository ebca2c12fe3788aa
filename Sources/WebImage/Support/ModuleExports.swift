// The package's shared primitives (`Locked`, `trimmingSpacesAndTabs`, `PartialDataThrottle`, `SHA256`,
// the big- and little-endian byte reader, `Hex`, `UTCDateTime`, `JSONWriter`) live in their own module so the HTTP stack can use them
// without depending on WebImage. Re-exported so every file here, and the package's other modules
// that import WebImage, see them as before; they are `package` declarations, so nothing reaches
// the public API.
@_exported import WebImageSupport
// The HTTP settings are declared once, in the HTTP stack (`HTTPClientSettings`, `ServerTrust`,
// `HTTPProxySettings`, `HTTPRetryPolicy`...) under those names (WebImage's second names for them,
// `HTTPClientSettings`, `ServerTrust`..., are deprecated), and held by
// `ImageDownloaderConfiguration`.
// So are a load's request, response and events (`HTTPLoadRequest`, `HTTPLoadResponse`,
// `HTTPLoadEvent`), WebImage's `ImageLoadRequest`, `ImageLoadResponse`, `ImageLoadEvent`,
// `LoadPriority` (and `HTTPLoadRequest.Validators`). Re-exported so a user of WebImage can name them without
// importing a second module.
@_exported import WebImageHTTP
