/// The built-in transformers, by what they do: ``Resize`` (placed by a ``Gravity``), ``SmartCrop``,
/// ``Crop``, ``Pad``, ``RoundCorner``, ``Grayscale``, ``Flip``, ``Rotate``, ``Orientation``, ``Blur``,
/// ``Sharpen``, ``Tint``, ``Watermark``, ``Flatten``, and ``Pipeline`` to chain them. Each is an ``ImageTransformer``; write your own by conforming to it.
public enum ImageTransformers {}

// The names the package's own code (the manager, the CLI, tests) has used for the built-in
// transformers. Package-only: the public names are the nested ones above.
package typealias BlurTransformer = ImageTransformers.Blur
package typealias CropTransformer = ImageTransformers.Crop
package typealias FlipTransformer = ImageTransformers.Flip
package typealias GrayscaleTransformer = ImageTransformers.Grayscale
package typealias OrientationTransformer = ImageTransformers.Orientation
package typealias PipelineTransformer = ImageTransformers.Pipeline
package typealias ResizeTransformer = ImageTransformers.Resize
package typealias RotateTransformer = ImageTransformers.Rotate
package typealias RoundCornerTransformer = ImageTransformers.RoundCorner
package typealias TintTransformer = ImageTransformers.Tint
