// The names the package's own code (the downloader, the CLI, tests) has used for the
// downloader's and prefetcher's types. Package-only: the public names are nested in
// ``ImageDownloader`` and ``ImagePrefetcher``.
package typealias DownloadToken = ImageDownloader.Token
package typealias DownloaderEvent = ImageDownloader.Event
package typealias DownloadOutcome = ImageDownloader.Outcome
package typealias DownloadExecutionOrder = ImageDownloader.ExecutionOrder
package typealias HTTPCredential = ImageDownloader.Credential
package typealias DownloadOptions = ImageDownloader.Options
package typealias PrefetchProgress = ImagePrefetcher.Progress
package typealias PrefetchSummary = ImagePrefetcher.Summary
package typealias PrefetchPolicy = ImagePrefetcher.Policy
package typealias PrefetchToken = ImagePrefetcher.Token
package typealias DownloadRequestModifier = ImageDownloader.RequestModifier
package typealias DownloadResponseModifier = ImageDownloader.ResponseModifier
package typealias DownloadRedirectPolicy = HTTPRedirectPolicy
