import WebImage

/// The library's ``/WebImage/EncodedImage``, under the name this module gave it before the
/// service rendered through the manager's encode stage.
@available(*, deprecated, renamed: "EncodedImage")
public typealias RenderedImage = EncodedImage
